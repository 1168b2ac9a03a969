"""Stage figures: draw plots/loss.png, plots/scores.png and plots/conditions.png from the summarized data."""

import argparse
from pathlib import Path

from frozenbridge.atomic import atomic_path
from frozenbridge.errors import FrozenbridgeError, run_cli
from frozenbridge.figures import conditions, loss_curves, read_rows, scores_by_recipe
from frozenbridge.params import load_params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--plots", default="plots")
    args = ap.parse_args()
    params = load_params(args.params)
    plots = Path(args.plots)
    if not (plots / "scores.csv").is_file():
        raise FrozenbridgeError(f"{plots}/scores.csv: not found; run `dvc repro summarize` first")
    rows = read_rows(plots / "scores.csv")
    recipes = list(params.recipes)
    with atomic_path(plots / "loss.png") as tmp:
        loss_curves(plots / "loss.csv", recipes, tmp)
    with atomic_path(plots / "scores.png") as tmp:
        scores_by_recipe(rows, recipes, tmp)
    with atomic_path(plots / "conditions.png") as tmp:
        conditions(rows, recipes, tmp)


if __name__ == "__main__":
    run_cli(main)
