"""Where the digits study's stages put things (dvc.yaml names the same paths)."""

from pathlib import Path

DATA = Path("data/digits")                # train.parquet, test.parquet: pixels and labels
FEATURES = Path("data/digits_features")   # the frozen classifier's vectors, the feature-cache format
CLASSIFIER = Path("runs/digits/classifier")
LANGUAGE = Path("runs/digits/language")
METRICS = Path("metrics/digits")
PLOTS = Path("plots/digits")
SPLITS = ("train", "test")


def adapter_dir(tokens: int, replicate: int, runs: Path = Path("runs")) -> Path:
    return runs / "digits" / "adapter" / f"{tokens}tok" / str(replicate)
