"""Stage shapes_analyze: what the runs' predictions say beyond their scores, with no model loaded.

Paired seeds: for qa vs caption_qa, caption_qa vs caption_qa_mix and caption_qa vs caption_qa_lora (where both ran),
per test set and task, in how many replicates the first is ahead, tied and behind, the median paired difference in
questions, the exact two-sided sign test over replicates and an exact order-statistic interval (binomial,
distribution-free) for that median (paired.json, paired.png). Wrong answers on held-out binding and leftmost over
every replicate of every recipe trained on questions: a color of another shape in the picture or not, the nearest
shape's color, one of the kind's two most common training colors, each beside chance (wrong_answers.json,
wrong_answers.png). Metrics go to metrics/shapes/, figures to plots/shapes/.
"""

import json

import pyarrow.parquet as pq

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, PLOTS, add_dirs, run_dir
from frozenbridge.shapes.summary.analysis_figures import paired_figure, wrong_answers_figure
from frozenbridge.shapes.summary.paired import paired
from frozenbridge.shapes.summary.replicates import load_scores
from frozenbridge.shapes.summary.wrong_answers import trained_on_questions, wrong_answers
from frozenbridge.shapes.training.recipes import RECIPES


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    args = ap.parse_args()
    params = load_params(args.params)
    files = [run_dir(args.runs, r, rep) / name for r in params.shapes.recipes for rep in params.replicates
             for name in ("scores.json", "predictions.json")]
    require(*files, stage="shapes_evaluate")
    require(METRICS / "data.json", f"{args.data}/pictures/test_heldout.parquet", stage="shapes_data")
    scores = load_scores(args.runs, params.shapes.recipes, params.replicates)
    pairs = paired(scores)
    write_json(METRICS / "paired.json", pairs)
    asked = [r for r in params.shapes.recipes if trained_on_questions(RECIPES[r])]  # caption never saw a question
    heldout = {r: [json.loads((run_dir(args.runs, r, rep) / "predictions.json").read_text())["heldout"]
                   for rep in params.replicates] for r in asked}
    heldout_path = f"{args.data}/pictures/test_heldout.parquet"
    scenes = pq.read_table(heldout_path, columns=["shapes"]).column("shapes").to_pylist()
    train_color_kind = json.loads(open(METRICS / "data.json").read())["train_color_kind"]
    wrong = wrong_answers(heldout, scenes, train_color_kind)
    write_json(METRICS / "wrong_answers.json", wrong)
    with atomic_path(PLOTS / "paired.png") as tmp:
        paired_figure(pairs, tmp)
    with atomic_path(PLOTS / "wrong_answers.png") as tmp:
        wrong_answers_figure(wrong, tmp)


if __name__ == "__main__":
    run_cli(main)
