"""Stage digits_summarize: every adapter run of the digits study over replicates, beside the ceiling and chance.

Writes metrics/digits/adapter.json (per number of prefix tokens: accuracy median, range and each replicate, share of
the classifier's accuracy reached, captions before training, well-formed share, distinct captions),
plots/digits/accuracy.csv (accuracy per epoch per run, for `dvc plots show`) and plots/digits/accuracy.png.
"""

import json

from frozenbridge.core.atomic import write_csv, write_json
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.digits.params import load_params
from frozenbridge.digits.paths import METRICS, PLOTS
from frozenbridge.digits.summary.figures import accuracy_figure
from frozenbridge.digits.summary.replicates import curve_rows, load_results, summarize


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    require(METRICS / "classifier.json", stage="digits_vision")
    ceiling = json.loads((METRICS / "classifier.json").read_text())["test_accuracy"]
    results = load_results(params.digits.adapter.tokens, params.replicates)
    write_json(METRICS / "adapter.json", summarize(results, ceiling))
    write_csv(PLOTS / "accuracy.csv", ["run", "epoch", "accuracy"], curve_rows(results))
    accuracy_figure(results, ceiling, PLOTS / "accuracy.png")


if __name__ == "__main__":
    run_cli(main)
