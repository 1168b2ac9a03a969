"""Stage audit_check: the reference's four checks on audit.folder's test questions.

The run answers every test question with its picture, a blank picture, another test picture and no picture. Writes
metrics/audit/audit.json (every number: scores and the gap to the best control with its bootstrap interval, overall
and per kind; the prior; seen against held-out; the failures classed; the linear probe), metrics/audit/answers.jsonl
(every answer) and the figure, plots/audit/audit.png. For the shapes study's own pictures (the default folder)
audit.json sets the audit beside the study's table (metrics/shapes/scores.json). The page, docs/audit.md, is written
from audit.json by `python -m frozenbridge.tools.report`.
"""

from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.run import check
from frozenbridge.audit.params import load_params
from frozenbridge.audit.paths import FEATURES, FIGURE, METRICS, RUN
from frozenbridge.core.stage import require, run_cli, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    folder = read_audit_folder(params.audit.folder)
    require(FEATURES, stage="audit_encode")
    require(RUN / "run.json", stage="audit_train")
    check(params, folder, FEATURES, RUN, METRICS / "audit.json", METRICS / "answers.jsonl", FIGURE)


if __name__ == "__main__":
    run_cli(main)
