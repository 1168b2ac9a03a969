"""Stage shapes_gallery: what one recipe's model says, as a picture: plots/shapes/gallery_<recipe>.png.

Four seen-pair and four held-out-pair test pictures (one a task: caption, count, binding, leftmost), each with its
prompt, the true answer and the output of the recipe's first replicate (the first of params `replicates`) under each
condition (the right picture, a blank one, a wrong one, none), exact matches marked green. Drawn from that run's
predictions.json and the test pictures; no model is loaded.
"""

from pathlib import Path

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.data.vocab import RECIPE_NAMES, TEST_SPLITS
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import PLOTS, add_dirs, run_dir
from frozenbridge.shapes.summary.gallery import run_gallery


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    ap.add_argument("--recipe", required=True, choices=RECIPE_NAMES, help="the recipe whose run captions the gallery (one of %(choices)s)")
    ap.add_argument("--plots", default=str(PLOTS), help=f"where the gallery goes (default {PLOTS})")
    args = ap.parse_args()
    params = load_params(args.params)
    replicate = params.replicates[0]
    run = run_dir(args.runs, args.recipe, replicate)
    pictures = Path(args.data) / "pictures"
    require(run / "predictions.json", stage=f"shapes_evaluate@{args.recipe}-{replicate}")
    require(*(pictures / f"{split}.parquet" for split in TEST_SPLITS.values()), stage="shapes_data")
    with atomic_path(Path(args.plots) / f"gallery_{args.recipe}.png") as tmp:
        run_gallery(run, pictures, f"Recipe {args.recipe}, replicate {replicate}: what the model says on test "
                    "pictures", tmp)


if __name__ == "__main__":
    run_cli(main)
