"""Stage train: one recipe, one replicate. Recipes that start from stage 1 load runs/stage1/<replicate>.

Recipes: caption (stage 1 as is), qa (questions from a random connector for stage1+stage2 steps), caption_qa,
caption_qa_lora (plus a LoRA adapter on the language model), caption_qa_mix (captions mixed into stage 2).
Writes runs/<recipe>/<replicate>/model/: connector.pt, lora/ (LoRA recipe), history.csv, run.json.
"""

import argparse
from pathlib import Path

from frozenbridge.errors import run_cli
from frozenbridge.params import check_replicate, load_params
from frozenbridge.recipes import RECIPES
from frozenbridge.rundata import load_split
from frozenbridge.runtime import setup
from frozenbridge.train import train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    ap.add_argument("--replicate", type=int, required=True, help="replicate index (one of params.yaml replicates)")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--data", default="data", help="directory holding shapes/ and features/")
    ap.add_argument("--runs", default="runs", help="where runs live")
    ap.add_argument("--checkpoints", default="checkpoints",
                    help="where resumable state is kept while the run trains (default checkpoints/)")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    data = load_split("train", Path(args.data) / "shapes", Path(args.data) / "features", params.vision)
    device, bf16, lm = setup(params)
    runs = Path(args.runs)
    train(params, args.recipe, args.replicate, data, lm, device, bf16,
          runs / args.recipe / str(args.replicate) / "model", stage1_dir=runs / "stage1" / str(args.replicate),
          checkpoint_dir=Path(args.checkpoints) / args.recipe / str(args.replicate))


if __name__ == "__main__":
    run_cli(main)
