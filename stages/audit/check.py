"""Stage audit_check: the reference's four checks on audit.folder's test questions, over every replicate of
audit.replicates.

Each replicate's run answers every test question with its picture, a blank picture, the wrong picture (another test
picture of the same side and kind, as the shapes study draws it) and no picture. Writes metrics/audit/audit.json
(every number: scores and the gap to the best control with its bootstrap interval, overall and per kind; the prior;
seen against held-out; the failures classed; the linear probe; each replicate's own gaps; each run's learning curve;
test pictures that repeat training ones), metrics/audit/answers.jsonl (every answer) and the figure,
plots/audit/audit.png. For the shapes study's own pictures (the default folder) audit.json sets the audit beside the
study's replicates, paired (metrics/shapes/replicates.json). The page, docs/audit.md, is written from audit.json by
`python -m frozenbridge.tools.report`.
"""

from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.run import check
from frozenbridge.audit.params import load_params
from frozenbridge.audit.paths import FEATURES, FIGURE, METRICS, RUNS
from frozenbridge.core.stage import require, run_cli, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    folder = read_audit_folder(params.audit.folder)
    require(FEATURES, stage="audit_encode")
    check(params, folder, FEATURES, RUNS, METRICS / "audit.json", METRICS / "answers.jsonl", FIGURE)


if __name__ == "__main__":
    run_cli(main)
