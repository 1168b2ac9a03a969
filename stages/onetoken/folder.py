"""Stage onetoken_folder: the shapes study's pictures as a captioned folder, the one-token study's default input.

Reads data/shapes/pictures/{train,test_seen,test_heldout}.parquet and writes data/onetoken/shapes/ in the datasets
imagefolder layout: train/ and test/, each with its PNGs and a metadata.jsonl (file_name, text = the caption, and
which shapes picture it is: shapes_split, shapes_id; the test pictures also say their test set, seen or heldout).
Any folder in that layout can replace it (params.yaml onetoken.folder); this stage always writes the shapes one.
"""

import logging

from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.onetoken.data.export import export_shapes
from frozenbridge.onetoken.paths import SHAPES_FOLDER
from frozenbridge.shapes.interface import PICTURES

log = logging.getLogger("frozenbridge.onetoken")


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--pictures", default=str(PICTURES), help=f"the shapes study's pictures (default {PICTURES})")
    args = ap.parse_args()
    counts = export_shapes(args.pictures, SHAPES_FOLDER)
    log.info("%s: %s", SHAPES_FOLDER, ", ".join(f"{n} {split} pictures" for split, n in counts.items()))


if __name__ == "__main__":
    run_cli(main)
