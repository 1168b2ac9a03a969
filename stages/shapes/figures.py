"""Stage shapes_figures: draw loss.png, scores.png and conditions.png in plots/shapes/ from the summarized data."""

from pathlib import Path

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import PLOTS
from frozenbridge.shapes.summary.figures import conditions, loss_curves, read_rows, scores_by_recipe


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--plots", default=str(PLOTS), help=f"where the plot data is and the figures go (default {PLOTS})")
    args = ap.parse_args()
    params = load_params(args.params)
    plots = Path(args.plots)
    require(plots / "scores.csv", plots / "loss.csv", stage="shapes_summarize")
    rows = read_rows(plots / "scores.csv")
    recipes = list(params.shapes.recipes)
    with atomic_path(plots / "loss.png") as tmp:
        loss_curves(plots / "loss.csv", recipes, tmp)
    with atomic_path(plots / "scores.png") as tmp:
        scores_by_recipe(rows, recipes, tmp)
    with atomic_path(plots / "conditions.png") as tmp:
        conditions(rows, recipes, tmp)


if __name__ == "__main__":
    run_cli(main)
