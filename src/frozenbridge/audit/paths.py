"""Where the audit's stages read and write (dvc.yaml names the same paths); `frozenbridge audit --out DIR` writes the
same files under DIR."""

from __future__ import annotations

from pathlib import Path

SHAPES_FOLDER = Path("data/audit/shapes")  # the shapes study's pictures and questions as an audit folder
FEATURES = Path("data/audit/features")  # train.parquet, test.parquet, blank.parquet
RUNS = Path("runs/audit")  # one folder a replicate, <r>/: model/ (a saved run), history.csv, run.json
METRICS = Path("metrics/audit")  # audit.json: every number of the page; answers.jsonl: every answer
FIGURE = Path("plots/audit/audit.png")
PAGE = Path("docs/audit.md")  # written from audit.json by python -m frozenbridge.tools.report


def run_dir(runs: Path, replicate: int) -> Path:
    """<runs>/<replicate>: one replicate's trained run."""
    return Path(runs) / str(replicate)
