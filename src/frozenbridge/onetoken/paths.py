"""Where the one-token study's stages read and write (dvc.yaml names the same paths)."""

from __future__ import annotations

from pathlib import Path

SHAPES_FOLDER = Path("data/onetoken/shapes")  # the shapes pictures as a captioned folder (onetoken_folder)
FEATURES = Path("data/onetoken/features")  # train.parquet, test.parquet: each picture's pooled vector
RUNS = Path("runs/onetoken")
METRICS = Path("metrics/onetoken")
PLOTS = Path("plots/onetoken")


def run_dir(replicate: int, runs: Path = RUNS) -> Path:
    """<runs>/<replicate>: one replicate's run (model/, result.json)."""
    return Path(runs) / str(replicate)
