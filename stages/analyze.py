"""Stage analyze: what the runs' predictions say beyond their scores, with no model loaded.

Paired seeds: for qa vs caption_qa, caption_qa vs caption_qa_mix and caption_qa vs caption_qa_lora (where both ran),
per test set and task, in how many replicates the first is ahead, tied and behind, and the median paired difference
in questions (metrics/paired.json, plots/paired.png). Wrong answers on held-out binding and leftmost over every
replicate of every recipe trained on questions: a color of another shape in the picture or not, the nearest shape's color, one of the kind's two most
common training colors, each beside chance (metrics/wrong_answers.json, plots/wrong_answers.png).
"""

import json

import pyarrow.parquet as pq

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import require, run_cli
from frozenbridge.shapes.stage_args import analysis_parser
from frozenbridge.shapes.aggregate import load_scores
from frozenbridge.shapes.analysis_figures import paired_figure, wrong_answers_figure
from frozenbridge.shapes.paired import paired
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.recipes import RECIPES
from frozenbridge.shapes.vocab import run_dir
from frozenbridge.shapes.wrong_answers import trained_on_questions, wrong_answers


def main() -> None:
    ap = analysis_parser(__doc__)
    args = ap.parse_args()
    params = load_params(args.params)
    files = [run_dir(args.runs, r, rep) / name for r in params.recipes for rep in params.replicates
             for name in ("scores.json", "predictions.json")]
    require(*files, stage="evaluate")
    require("metrics/data.json", f"{args.data}/shapes/test_heldout.parquet", stage="generate")
    scores = load_scores(args.runs, params.recipes, params.replicates)
    pairs = paired(scores)
    write_json("metrics/paired.json", pairs)
    asked = [r for r in params.recipes if trained_on_questions(RECIPES[r])]  # caption never saw a question
    heldout = {r: [json.loads((run_dir(args.runs, r, rep) / "predictions.json").read_text())["heldout"]
                   for rep in params.replicates] for r in asked}
    scenes = pq.read_table(f"{args.data}/shapes/test_heldout.parquet", columns=["shapes"]).column("shapes").to_pylist()
    train_color_kind = json.loads(open("metrics/data.json").read())["train_color_kind"]
    wrong = wrong_answers(heldout, scenes, train_color_kind)
    write_json("metrics/wrong_answers.json", wrong)
    with atomic_path("plots/paired.png") as tmp:
        paired_figure(pairs, tmp)
    with atomic_path("plots/wrong_answers.png") as tmp:
        wrong_answers_figure(wrong, tmp)


if __name__ == "__main__":
    run_cli(main)
