"""Stage shapes_train: one recipe, one replicate. Recipes that start from stage 1 load
runs/shapes/stage1/<replicate>.

Recipes: caption (stage 1 as is), qa (questions from a random connector for stage1+stage2 steps), caption_qa,
caption_qa_lora (plus a LoRA adapter on the language model), caption_qa_mix (captions mixed into stage 2).
Writes runs/shapes/<recipe>/<replicate>/model/: the saved run (config.json, connector.pt, lora/ for the LoRA
recipe), history.csv and run.json. While it trains, resumable state is saved to
checkpoints/shapes/<recipe>/<replicate>/ every shapes.train.checkpoint_every steps; a killed run restarted with the
same params resumes there and ends with the same result.
"""

from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.data.vocab import RECIPE_NAMES
from frozenbridge.shapes.paths import STAGE1, model_dir
from frozenbridge.shapes.training.run import train
from frozenbridge.shapes.training.start import start_training, training_parser


def main() -> None:
    ap = training_parser(__doc__)
    ap.add_argument("--recipe", required=True, choices=RECIPE_NAMES, help="the recipe to train (one of %(choices)s)")
    args = ap.parse_args()
    params, data, device, bf16, lm = start_training(args)
    out, stage1 = model_dir(args.runs, args.recipe, args.replicate), model_dir(args.runs, STAGE1, args.replicate)
    train(params, args.recipe, args.replicate, data, lm, device, bf16, out, stage1_dir=stage1,
          checkpoint_dir=args.checkpoints / args.recipe / str(args.replicate),
          codebook_dir=args.data / "codebook")


if __name__ == "__main__":
    run_cli(main)
