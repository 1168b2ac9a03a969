"""Where the one-token study's stages put things (dvc.yaml names the same paths)."""

from pathlib import Path

SHAPES_FOLDER = Path("data/onetoken/shapes")  # the shapes pictures as a captioned folder (onetoken_folder)
FEATURES = Path("data/onetoken/features")  # train.parquet, test.parquet: each picture's pooled vector
METRICS = Path("metrics/onetoken")
PLOTS = Path("plots/onetoken")


def run_dir(replicate: int, runs: Path = Path("runs")) -> Path:
    return runs / "onetoken" / str(replicate)
