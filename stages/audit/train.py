"""Stage audit_train: the connector trained on audit.folder's training pictures, both backbones frozen: stage 1 on
their captions (audit.train.stage1_steps; skipped when none has a caption), then stage 2 on their questions.

Reads data/audit/features and writes runs/audit/: model/ (a saved run: `frozenbridge ask runs/audit/model PICTURE
QUESTION`), history.csv (the loss a step) and run.json (steps, final losses, device, precision).
"""

from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.params import load_params
from frozenbridge.audit.paths import FEATURES, RUN
from frozenbridge.audit.training.run import train
from frozenbridge.core.stage import require, run_cli, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    folder = read_audit_folder(params.audit.folder)
    require(FEATURES, stage="audit_encode")
    train(params, folder, FEATURES, RUN)


if __name__ == "__main__":
    run_cli(main)
