"""Stage stage1: train the connector on captions (stage 1) for one replicate.

Every recipe that starts from stage 1 reuses this run instead of retraining it. Writes runs/stage1/<replicate>/:
connector.pt, history.csv (loss per step) and run.json.
While it trains, resumable state is saved to checkpoints/stage1/<replicate>/ every train.checkpoint_every steps;
a killed run restarted with the same params resumes there and ends with the same result.
"""

import argparse
from pathlib import Path

from frozenbridge.errors import run_cli
from frozenbridge.runtime import add_training_args, start_training
from frozenbridge.train import train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_training_args(ap)
    ap.add_argument("--out", default=None, help="run directory (default runs/stage1/<replicate>)")
    args = ap.parse_args()
    params, data, device, bf16, lm = start_training(args)
    train(params, None, args.replicate, data, lm, device, bf16, Path(args.out or f"runs/stage1/{args.replicate}"),
          checkpoint_dir=args.checkpoints / "stage1" / str(args.replicate))


if __name__ == "__main__":
    run_cli(main)
