"""Stage audit_folder: the shapes study's pictures and questions as an audit folder, the audit's default input.

Reads data/shapes/pictures/{train,test_seen,test_heldout}.parquet and writes data/audit/shapes/: train/ (the
training pictures, their captions and questions) and test/ (the seen-pair and held-out-pair test pictures, the
latter marked "heldout": true), each with its PNGs and a metadata.jsonl; a question's kind is its task. Any folder in
that format can replace it (params.yaml audit.folder); this stage always writes the shapes one.
"""

import logging

from frozenbridge.audit.data.export import export_shapes
from frozenbridge.audit.paths import SHAPES_FOLDER
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.interface import PICTURES

log = logging.getLogger("frozenbridge.audit")


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--pictures", default=str(PICTURES), help=f"the shapes study's pictures (default {PICTURES})")
    args = ap.parse_args()
    counts = export_shapes(args.pictures, SHAPES_FOLDER)
    log.info("%s: %s", SHAPES_FOLDER, ", ".join(f"{c['pictures']} {split} pictures with {c['questions']} questions"
                                                for split, c in counts.items()))


if __name__ == "__main__":
    run_cli(main)
