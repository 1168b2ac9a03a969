"""Stage shapes_codebook: the codebook design's centroids, fitted once over the cached training features.

Writes data/shapes/codebook/: centroids.pt and codebook.json where shapes.connector.design is codebook (k-means of
the training pictures' merged patch vectors into shapes.connector.codebook.codes centroids, seeded by `seed`); for
every other design codebook.json alone, the same bytes whatever the other connector params, so nothing reruns for
it.
"""

from pathlib import Path

from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import CODEBOOK, FEATURES, PICTURES
from frozenbridge.shapes.training.codebook import write_codebook
from frozenbridge.shapes.training.split_data import load_split


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=CODEBOOK, help=f"where the codebook goes (default {CODEBOOK})")
    args = ap.parse_args()
    params = load_params(args.params)
    require(FEATURES / "train.parquet", stage="shapes_encode")
    data = load_split("train", PICTURES, FEATURES, params.vision) if params.shapes.connector.design == "codebook" \
        else None
    write_codebook(params, data, args.out)


if __name__ == "__main__":
    run_cli(main)
