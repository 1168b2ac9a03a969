"""Stage train: one recipe, one replicate. Recipes that start from stage 1 load runs/stage1/<replicate>.

Recipes: caption (stage 1 as is), qa (questions from a random connector for stage1+stage2 steps), caption_qa,
caption_qa_lora (plus a LoRA adapter on the language model), caption_qa_mix (captions mixed into stage 2).
Writes runs/<recipe>/<replicate>/model/: the saved run (config.json, connector.pt, lora/ for the LoRA recipe),
history.csv and run.json.
While it trains, resumable state is saved to checkpoints/<recipe>/<replicate>/ every train.checkpoint_every steps;
a killed run restarted with the same params resumes there and ends with the same result.
"""

from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.setup import start_training, training_parser
from frozenbridge.shapes.train import train
from frozenbridge.shapes.vocab import RECIPE_NAMES, STAGE1, model_dir


def main() -> None:
    ap = training_parser(__doc__)
    ap.add_argument("--recipe", required=True, choices=RECIPE_NAMES)
    ap.add_argument("--runs", default="runs", help="where runs live")
    args = ap.parse_args()
    params, data, device, bf16, lm = start_training(args)
    train(params, args.recipe, args.replicate, data, lm, device, bf16, model_dir(args.runs, args.recipe, args.replicate),
          stage1_dir=model_dir(args.runs, STAGE1, args.replicate),
          checkpoint_dir=args.checkpoints / args.recipe / str(args.replicate))


if __name__ == "__main__":
    run_cli(main)
