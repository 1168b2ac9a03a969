"""Stage shapes_data: draw the colored-shapes pictures, captions and questions for every split.

Writes data/shapes/pictures/{train,test_seen,test_heldout}.parquet (one row a picture: PNG, shapes, caption,
questions), metrics/shapes/data.json (counts, including the training color x kind table) and plots/shapes/ (a
contact sheet and the color x kind heatmap).
"""

import pyarrow.parquet as pq

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.data.splits import generate_split, split_seeds, summary
from frozenbridge.shapes.data.vocab import SPLITS
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, PICTURES, PLOTS
from frozenbridge.shapes.summary.data_figures import color_kind_heatmap, contact_sheet


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", default=str(PICTURES), help=f"where the split Parquet files go (default {PICTURES})")
    args = ap.parse_args()
    cfg = load_params(args.params).shapes.data

    seeds = split_seeds(cfg.seed)
    tables = {split: generate_split(split, getattr(cfg.sizes, split), cfg, seeds[split]) for split in SPLITS}
    with atomic_path(args.out) as tmp:
        tmp.mkdir()
        for split, table in tables.items():
            pq.write_table(table, tmp / f"{split}.parquet")
    stats = summary(tables)
    write_json(METRICS / "data.json", stats)
    with atomic_path(PLOTS / "examples.png") as tmp:
        contact_sheet(tables, tmp)
    with atomic_path(PLOTS / "train_color_kind.png") as tmp:
        color_kind_heatmap(stats["train_color_kind"], cfg.held_out, tmp)


if __name__ == "__main__":
    run_cli(main)
