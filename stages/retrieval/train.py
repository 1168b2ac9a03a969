"""Stage retrieval_train: one text tower and the picture projection, trained contrastively for one replicate.

Reads the shapes pictures' cached features (data/shapes/features, averaged over the grid) and scenes
(data/shapes/pictures), and the cached caption vectors (data/retrieval/texts); the frozen models are never loaded.
Writes runs/retrieval/<tower>/<replicate>/ with the trained parts (weights.pt, config.json) and result.json (recall@1
and @5 per test set, caption length and direction, their chance level, the phrasing diagnostic before and after the
tower, the loss per epoch).
"""

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.params import check_replicate
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.retrieval.data.text_cache import has_text_tower
from frozenbridge.retrieval.params import TOWERS, load_params
from frozenbridge.retrieval.paths import CACHES, TEXT_FEATURES, run_dir
from frozenbridge.retrieval.training.run import train_run


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--tower", required=True, choices=TOWERS, help="which text tower (retrieval.towers)")
    ap.add_argument("--replicate", type=int, required=True, help="one of params.yaml replicates")
    args = ap.parse_args()
    params = load_params(args.params)
    if args.tower not in params.retrieval.towers:
        raise FrozenbridgeError(f"--tower {args.tower} is not in params.yaml retrieval.towers "
                                f"{list(params.retrieval.towers)}")
    check_replicate(params, args.replicate)
    if args.tower == "vision_text" and not has_text_tower(params.vision.name):
        raise FrozenbridgeError(f"--tower vision_text needs an image-text model (CLIP, SigLIP) as vision.name; "
                                f"{params.vision.name!r} has no text tower")
    require(TEXT_FEATURES / f"{CACHES.get(args.tower, 'lm')}.parquet", stage="retrieval_embed")
    train_run(params, args.tower, args.replicate, run_dir(args.tower, args.replicate))


if __name__ == "__main__":
    run_cli(main)
