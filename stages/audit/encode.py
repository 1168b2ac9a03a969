"""Stage audit_encode: every picture of audit.folder through the frozen encoder once (params.yaml's vision section,
as the shapes study reads its pictures).

Reads the folder (checked first: every problem is one line naming the file and row, before any work) and writes
data/audit/features/{train,test,blank}.parquet: one row a picture in metadata.jsonl's order, and the white picture
of the controls.
"""

from frozenbridge.audit.data.features import encode
from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.params import load_params
from frozenbridge.audit.paths import FEATURES
from frozenbridge.core.stage import run_cli, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    folder = read_audit_folder(params.audit.folder)
    encode(params, folder, FEATURES)


if __name__ == "__main__":
    run_cli(main)
