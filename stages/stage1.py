"""Stage stage1: train the connector on captions (stage 1) for one replicate.

Every recipe that starts from stage 1 reuses this run instead of retraining it. Writes runs/stage1/<replicate>/:
connector.pt, history.csv (loss per step) and run.json.
"""

import argparse
from pathlib import Path

from frozenbridge.errors import run_cli
from frozenbridge.params import check_replicate, load_params
from frozenbridge.rundata import load_split
from frozenbridge.runtime import setup
from frozenbridge.train import train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicate", type=int, required=True, help="replicate index (one of params.yaml replicates)")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--data", default="data", help="directory holding shapes/ and features/")
    ap.add_argument("--out", default=None, help="run directory (default runs/stage1/<replicate>)")
    ap.add_argument("--checkpoints", default="checkpoints",
                    help="where resumable state is kept while the run trains (default checkpoints/)")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    data = load_split("train", Path(args.data) / "shapes", Path(args.data) / "features", params.vision)
    device, bf16, lm = setup(params)
    train(params, None, args.replicate, data, lm, device, bf16, Path(args.out or f"runs/stage1/{args.replicate}"),
          checkpoint_dir=Path(args.checkpoints) / "stage1" / str(args.replicate))


if __name__ == "__main__":
    run_cli(main)
