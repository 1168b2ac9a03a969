"""Where the retrieval study's stages put things (dvc.yaml names the same paths)."""

from pathlib import Path

TEXT_FEATURES = Path("data/text_features")  # lm.parquet (and vision_text.parquet): every caption's frozen vector
METRICS = Path("metrics/retrieval")
PLOTS = Path("plots/retrieval")
CACHES = {"adaptor": "lm", "linear": "lm", "vision_text": "vision_text"}  # tower -> the text cache it reads


def run_dir(tower: str, replicate: int, runs: Path = Path("runs")) -> Path:
    return runs / "retrieval" / tower / str(replicate)
