"""Stage digits_train: train one adapter (the only trainable part) between the frozen classifier's cached vectors
and the frozen character model, for one number of prefix tokens and one replicate.

Captions every test digit greedily after each epoch (epoch 0: before any training) and writes
runs/digits/adapter/<tokens>tok/<replicate>/ with the adapter (weights.pt, config.json), result.json (accuracy per
epoch, well-formed share, distinct captions, trainable parameters, and a check that the language model's weights did
not change) and
captions.json (every test caption beside its label).
"""

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.params import check_replicate
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.digits.params import load_params
from frozenbridge.digits.paths import CLASSIFIER, FEATURES, LANGUAGE, SPLITS, adapter_dir
from frozenbridge.digits.training.run import train_run


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--tokens", type=int, required=True, help="prefix slots the adapter fills (digits.adapter.tokens)")
    ap.add_argument("--replicate", type=int, required=True, help="one of params.yaml replicates")
    args = ap.parse_args()
    params = load_params(args.params)
    if args.tokens not in params.digits.adapter.tokens:
        raise FrozenbridgeError(f"--tokens {args.tokens} is not in params.yaml digits.adapter.tokens "
                                f"{list(params.digits.adapter.tokens)}")
    check_replicate(params, args.replicate)
    require(*(FEATURES / f"{s}.parquet" for s in SPLITS), CLASSIFIER / "config.json", stage="digits_vision")
    require(LANGUAGE / "weights.pt", stage="digits_language")
    train_run(params, args.tokens, args.replicate, adapter_dir(args.tokens, args.replicate))


if __name__ == "__main__":
    run_cli(main)
