"""Stage audit_train@R: replicate R of the connector trained on audit.folder's training pictures, both backbones
frozen: stage 1 on their captions (audit.train.stage1_steps; skipped when none has a caption), then stage 2 on their
questions, from the shapes study's seed streams of replicate R (so an audit of the study's own pictures pairs with
the study's replicate R).

Reads data/audit/features and writes runs/audit/R/: model/ (a saved run: `frozenbridge ask runs/audit/0/model
PICTURE QUESTION`), history.csv (the loss a step) and run.json (steps, final losses, device, precision).
"""

from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.params import load_params
from frozenbridge.audit.paths import FEATURES, RUNS, run_dir
from frozenbridge.audit.training.run import train
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.stage import require, run_cli, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--replicate", type=int, required=True, help="one of params.yaml audit.replicates")
    args = ap.parse_args()
    params = load_params(args.params)
    if args.replicate not in params.audit.replicates:
        raise FrozenbridgeError(f"--replicate {args.replicate} is not in params.yaml audit.replicates "
                                f"{list(params.audit.replicates)}")
    folder = read_audit_folder(params.audit.folder)
    require(FEATURES, stage="audit_encode")
    train(params, folder, FEATURES, run_dir(RUNS, args.replicate), args.replicate)


if __name__ == "__main__":
    run_cli(main)
