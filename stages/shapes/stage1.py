"""Stage shapes_stage1: train the connector on captions (stage 1) for one replicate.

Every recipe that starts from stage 1 reuses this run instead of retraining it. Writes
runs/shapes/stage1/<replicate>/: the saved run (config.json, connector.pt), history.csv (loss per step) and
run.json. While it trains, resumable state is saved to checkpoints/shapes/stage1/<replicate>/ every
shapes.train.checkpoint_every steps; a killed run restarted with the same params resumes there and ends with the
same result.
"""

from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.paths import STAGE1, model_dir
from frozenbridge.shapes.training.run import train
from frozenbridge.shapes.training.start import start_training, training_parser


def main() -> None:
    ap = training_parser(__doc__)
    ap.add_argument("--out", default=None, help="run directory (default <runs>/stage1/<replicate>)")
    args = ap.parse_args()
    params, data, device, bf16, lm = start_training(args)
    out = args.out or model_dir(args.runs, STAGE1, args.replicate)
    train(params, None, args.replicate, data, lm, device, bf16, out,
          checkpoint_dir=args.checkpoints / STAGE1 / str(args.replicate),
          codebook_dir=args.data / "codebook")


if __name__ == "__main__":
    run_cli(main)
