"""Stage retrieval_summarize: every retrieval run over replicates, beside chance and the phrasing diagnostic.

Writes metrics/retrieval/recall.json (per text tower: recall@1 and @5 median and range for each test set, caption
length and direction; chance; the phrasing diagnostic before and after), plots/retrieval/recall.csv (recall@1 rows
for `dvc plots show`) and plots/retrieval/recall.png.
"""

from frozenbridge.core.atomic import write_csv, write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.retrieval.params import load_params
from frozenbridge.retrieval.paths import METRICS, PLOTS
from frozenbridge.retrieval.summary.figures import recall_figure
from frozenbridge.retrieval.summary.replicates import RECALL_HEADER, load_results, recall_rows, summarize


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    summary = summarize(load_results(params.retrieval.towers, params.replicates))
    write_json(METRICS / "recall.json", summary)
    write_csv(PLOTS / "recall.csv", RECALL_HEADER, recall_rows(summary))
    recall_figure(summary, PLOTS / "recall.png")


if __name__ == "__main__":
    run_cli(main)
