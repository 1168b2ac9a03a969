"""Stage summarize: aggregate every run's scores over replicates (median, min, max) into metrics/ and plots/.

Writes metrics/scores.json (right-picture score and gap per recipe, test set and task; distinct captions),
metrics/controls.json (blank, wrong and no-picture scores; wrong answers scored against the picture shown),
metrics/replicates.json (every run's right-picture score and gap, for replicate-by-replicate comparisons),
plots/scores.csv (one row per recipe, test, task and condition) and plots/loss.csv (every run's loss per step).
"""

import argparse
import csv
from pathlib import Path

from frozenbridge.aggregate import aggregate, load_scores, per_replicate, score_rows
from frozenbridge.atomic import atomic_path, write_json
from frozenbridge.errors import FrozenbridgeError, run_cli
from frozenbridge.params import load_params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--runs", default="runs")
    args = ap.parse_args()
    params = load_params(args.params)
    runs = Path(args.runs)
    missing = [f"{runs}/{r}/{rep}/scores.json" for r in params.recipes for rep in params.replicates
               if not (runs / r / str(rep) / "scores.json").is_file()]
    if missing:
        raise FrozenbridgeError(f"{missing[0]}: not found; run `dvc repro` to train and evaluate every run")
    scores = load_scores(runs, params)
    main_metrics, controls = aggregate(scores)
    write_json("metrics/scores.json", main_metrics)
    write_json("metrics/controls.json", controls)
    write_json("metrics/replicates.json", per_replicate(scores))
    rows = score_rows(scores)
    with atomic_path("plots/scores.csv") as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with atomic_path("plots/loss.csv") as tmp, open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["recipe", "replicate", "step", "phase", "loss"])
        for recipe in params.recipes:
            for rep in params.replicates:
                with open(runs / recipe / str(rep) / "model" / "history.csv", newline="") as h:
                    w.writerows([recipe, rep, r["step"], r["phase"], r["loss"]] for r in csv.DictReader(h))


if __name__ == "__main__":
    run_cli(main)
