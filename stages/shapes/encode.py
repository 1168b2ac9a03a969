"""Stage shapes_encode: every picture through the frozen vision encoder once, cached as Parquet features.

Reads data/shapes/pictures/*.parquet and writes data/shapes/features/{train,test_seen,test_heldout,blank}.parquet,
where `blank` is the single white picture of the controls. Each file's metadata holds the encoder name, revision,
feature kind, layer, grid and width. metrics/shapes/encode.json records the output shape and file sizes
(deterministic, so `dvc metrics diff` shows real changes); throughput goes to the log only.
"""

import logging
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones import load_vision
from frozenbridge.core.device import pick_device
from frozenbridge.core.feature_cache import encode_images, picture_batches
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.data.draw import blank
from frozenbridge.shapes.data.vocab import SPLITS
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import FEATURES, METRICS, PICTURES

log = logging.getLogger("frozenbridge.shapes")


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--pictures", default=str(PICTURES), help=f"the split Parquet files (default {PICTURES})")
    ap.add_argument("--out", default=str(FEATURES), help=f"output directory for the features (default {FEATURES})")
    args = ap.parse_args()
    params = load_params(args.params)
    shapes = Path(args.pictures)
    require(*(shapes / f"{s}.parquet" for s in SPLITS), stage="shapes_data")

    device = pick_device(params.device)
    encoder = load_vision(params.vision.name, params.vision.features, params.vision.layer,
                          params.shapes.data.image_size).to(device)
    cfg = params.vision
    stats = {"encoder": encoder.name, "output_shape": encoder.output_shape, "dtype": cfg.dtype}
    pictures, seconds = 0, 0.0
    with atomic_path(args.out) as tmp:
        tmp.mkdir()
        for split in SPLITS:
            total = pq.ParquetFile(shapes / f"{split}.parquet").metadata.num_rows
            start = time.perf_counter()
            encode_images(encoder, picture_batches(shapes / f"{split}.parquet", cfg.batch_size), total,
                          tmp / f"{split}.parquet", cfg.dtype, {"split": split}, f"encode {split}")
            seconds += time.perf_counter() - start
            pictures += total
        white = blank(params.shapes.data.image_size)
        encode_images(encoder, iter([(np.array([0]), [white])]), 1, tmp / "blank.parquet", cfg.dtype,
                      {"split": "blank"}, "encode blank")
        sizes = {p.stem: p.stat().st_size for p in sorted(tmp.glob("*.parquet"))}
    stats.update(pictures=pictures, bytes=sizes, bytes_per_picture=round(sum(sizes.values()) / (pictures + 1)))
    log.info("encoded %d pictures in %.1f s: %.1f pictures/s; features %.1f MB", pictures, seconds,
             pictures / seconds, sum(sizes.values()) / 1e6)
    write_json(METRICS / "encode.json", stats)


if __name__ == "__main__":
    run_cli(main)
