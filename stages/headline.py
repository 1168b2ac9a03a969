r"""Stage headline: the dozen numbers a person compares across experiments, from every study's metrics.

Writes metrics/headline.json: per study, the median over replicates of each headline measure (exact captions, the
questions' gaps, captioning first against questions only, the digits adapter against its classifier, retrieval
recall, the one-token share of the gap). `dvc exp show --drop '.*' --keep 'Experiment|^seed$|^headline\.'`
shows just these beside each experiment's seed.
"""

from pathlib import Path

from frozenbridge.core.atomic import write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.tools.headline import headline


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--metrics", type=Path, default=Path("metrics"), help="every study's metrics (default metrics/)")
    args = ap.parse_args()
    write_json(args.metrics / "headline.json", headline(args.metrics))


if __name__ == "__main__":
    run_cli(main)
