"""Stage train: one recipe, one replicate. Recipes that start from stage 1 load runs/stage1/<replicate>.

Recipes: caption (stage 1 as is), qa (questions from a random connector for stage1+stage2 steps), caption_qa,
caption_qa_lora (plus a LoRA adapter on the language model), caption_qa_mix (captions mixed into stage 2).
Writes runs/<recipe>/<replicate>/model/: connector.pt, lora/ (LoRA recipe), history.csv, run.json.
While it trains, resumable state is saved to checkpoints/<recipe>/<replicate>/ every train.checkpoint_every steps;
a killed run restarted with the same params resumes there and ends with the same result.
"""

import argparse
from pathlib import Path

from frozenbridge.errors import run_cli
from frozenbridge.recipes import RECIPES
from frozenbridge.runtime import add_training_args, start_training
from frozenbridge.train import train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    add_training_args(ap)
    ap.add_argument("--runs", default="runs", help="where runs live")
    args = ap.parse_args()
    params, data, device, bf16, lm = start_training(args)
    runs = Path(args.runs)
    train(params, args.recipe, args.replicate, data, lm, device, bf16,
          runs / args.recipe / str(args.replicate) / "model", stage1_dir=runs / "stage1" / str(args.replicate),
          checkpoint_dir=args.checkpoints / args.recipe / str(args.replicate))


if __name__ == "__main__":
    run_cli(main)
