"""Stage onetoken_train: one replicate of the one-token connector (pooled vector -> MLP -> prefix_tokens tokens
after the prompt), trained on the folder's captions with the language model frozen.

Reads data/onetoken/features; writes runs/onetoken/<replicate>/ with model/ (a saved run the `frozenbridge` command
line reads: `frozenbridge caption runs/onetoken/0/model picture.png`) and result.json (the test captions written by
the untrained connector, the floor, and by the trained one; exact matches; distinct captions; the loss curve).
"""

from frozenbridge.core.device import pick_device
from frozenbridge.core.frozen import frozen_language
from frozenbridge.core.params import check_replicate
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.onetoken.data.features import load_pictures
from frozenbridge.onetoken.params import load_params
from frozenbridge.onetoken.paths import FEATURES, run_dir
from frozenbridge.onetoken.training.run import train_run


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--replicate", type=int, required=True, help="one of params.yaml replicates")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    require(FEATURES / "train.parquet", FEATURES / "test.parquet", stage="onetoken_encode")
    name = params.onetoken.encoder.name
    train, test = (load_pictures(FEATURES / f"{s}.parquet", name) for s in ("train", "test"))
    device = pick_device(params.device)
    lm, bf16 = frozen_language(params.language.name, device, params.onetoken.train.precision)
    train_run(params, args.replicate, train, test, lm, device, bf16, run_dir(args.replicate))


if __name__ == "__main__":
    run_cli(main)
