"""Stage shapes_summarize: every run's scores over replicates (median, min, max) into metrics/shapes/ and
plots/shapes/.

Writes scores.json (right-picture score and gap per recipe, test set and task; distinct captions), controls.json
(blank, wrong and no-picture scores; wrong answers scored against the picture shown), replicates.json (every run's
right-picture score and gap, for replicate-by-replicate comparisons), stage1.json (each replicate's stage 1 as its
stop rule read it: the share of its training captions exact at each check, the loss there, its steps, what its
design did inside), and the plot data scores.csv (one row per recipe, test, task and condition) and loss.csv (every
run's loss per step).
"""

from pathlib import Path

from frozenbridge.core.atomic import write_csv, write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, PLOTS, RUNS, run_dir
from frozenbridge.shapes.summary.replicates import (aggregate, load_scores, loss_rows, per_replicate, score_rows,
                                                    stage1_curves)


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--runs", type=Path, default=RUNS, help=f"where the trained runs are (default {RUNS})")
    args = ap.parse_args()
    params = load_params(args.params)
    wanted = [run_dir(args.runs, r, rep) / "scores.json" for r in params.shapes.recipes for rep in params.replicates]
    missing = [p for p in wanted if not p.is_file()]
    if missing:
        raise FrozenbridgeError(f"{missing[0]}: not found; run `dvc repro` to train and evaluate every run")
    scores = load_scores(args.runs, params.shapes.recipes, params.replicates)
    main_metrics, controls = aggregate(scores)
    write_json(METRICS / "scores.json", main_metrics)
    write_json(METRICS / "controls.json", controls)
    write_json(METRICS / "replicates.json", per_replicate(scores))
    write_json(METRICS / "stage1.json", stage1_curves(args.runs, params.replicates))
    rows = score_rows(scores)
    write_csv(PLOTS / "scores.csv", list(rows[0]), [list(r.values()) for r in rows])
    write_csv(PLOTS / "loss.csv", ["recipe", "replicate", "step", "phase", "loss"],
              loss_rows(args.runs, params.shapes.recipes, params.replicates))


if __name__ == "__main__":
    run_cli(main)
