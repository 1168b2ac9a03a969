"""Where the digits study's stages read and write (dvc.yaml names the same paths)."""

from __future__ import annotations

from pathlib import Path

PICTURES = Path("data/digits/pictures")  # train.parquet, test.parquet: pixels and labels
FEATURES = Path("data/digits/features")  # the frozen classifier's vectors, in the feature-cache format
RUNS = Path("runs/digits")
CLASSIFIER = RUNS / "classifier"  # the frozen classifier (weights.pt, config.json)
LANGUAGE = RUNS / "language"  # the frozen character LM
METRICS = Path("metrics/digits")
PLOTS = Path("plots/digits")
SPLITS = ("train", "test")


def adapter_dir(tokens: int, replicate: int, runs: Path = RUNS) -> Path:
    """<runs>/adapter/<tokens>tok/<replicate>: one adapter run (weights, result.json, captions.json)."""
    return Path(runs) / "adapter" / f"{tokens}tok" / str(replicate)
