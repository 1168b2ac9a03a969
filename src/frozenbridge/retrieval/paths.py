"""Where the retrieval study's stages read and write (dvc.yaml names the same paths)."""

from __future__ import annotations

from pathlib import Path

TEXT_FEATURES = Path("data/retrieval/texts")  # lm.parquet (and vision_text.parquet): every caption's frozen vector
RUNS = Path("runs/retrieval")
METRICS = Path("metrics/retrieval")
PLOTS = Path("plots/retrieval")
CACHES = {"adaptor": "lm", "linear": "lm", "vision_text": "vision_text"}  # tower -> the text cache it reads


def run_dir(tower: str, replicate: int, runs: Path = RUNS) -> Path:
    """<runs>/<tower>/<replicate>: one text tower's run (weights, config.json, result.json)."""
    return Path(runs) / tower / str(replicate)
