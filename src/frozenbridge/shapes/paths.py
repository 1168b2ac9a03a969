"""Where the shapes study's stages read and write (dvc.yaml names the same paths)."""

from __future__ import annotations

from pathlib import Path

DATA = Path("data/shapes")
PICTURES = DATA / "pictures"  # train, test_seen, test_heldout .parquet: PNG, scene, caption, questions a row
FEATURES = DATA / "features"  # the same splits and blank.parquet through the frozen encoder once
CODEBOOK = DATA / "codebook"  # the codebook design's centroids (shapes_codebook; a note alone for other designs)
RUNS = Path("runs/shapes")  # stage1/<replicate>/, <recipe>/<replicate>/{model/, scores.json, predictions.json}
CHECKPOINTS = Path("checkpoints/shapes")  # resumable state of a run while it trains (outside DVC's outputs)
METRICS = Path("metrics/shapes")
PLOTS = Path("plots/shapes")
STAGE1 = "stage1"  # the run every recipe marked from_stage1 starts from (runs/shapes/stage1/<replicate>)


def run_dir(runs: str | Path, recipe: str, replicate: int) -> Path:
    """<runs>/<recipe>/<replicate>: a recipe run's directory (its trained model under model/, its scores beside)."""
    return Path(runs) / recipe / str(replicate)


def model_dir(runs: str | Path, recipe: str, replicate: int) -> Path:
    """Where a run's trained connector lives: <runs>/stage1/<replicate> for stage 1, else <run_dir>/model."""
    if recipe == STAGE1:
        return run_dir(runs, recipe, replicate)
    return run_dir(runs, recipe, replicate) / "model"


def add_dirs(ap, runs: bool = True):
    """The --data and --runs arguments the study's stages share, defaulting to DATA and RUNS."""
    ap.add_argument("--data", type=Path, default=DATA, help=f"the study's pictures/ and features/ (default {DATA})")
    if runs:
        ap.add_argument("--runs", type=Path, default=RUNS, help=f"where the trained runs are (default {RUNS})")
    return ap
