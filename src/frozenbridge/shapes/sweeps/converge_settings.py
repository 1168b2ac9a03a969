"""The convergence sweep's settings (overrides of keys under `shapes:`) and how a run's mode is keyed: what
`converge` runs and what its JSON file records. Kept apart from the loop so a reader sees the settings at a glance."""

from __future__ import annotations

import copy
from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.params import Params

THRESHOLDS = (50, 70)  # exact captions, %, whose first steps each run records

# Every setting names all the knobs tried, so a row means the same whatever params.yaml holds today.
BEFORE = {"train.lr": 1e-3, "train.stage1_schedule": "constant", "train.stage1_warmup": 0.0, "train.batch_size": 16,
          "connector.mlp.merge": 2, "connector.mlp.order": "rows", "connector.mlp.norm": False, "connector.mlp.positions": False,
          "connector.mlp.init_scale": 1.0}
COLUMNS = {**BEFORE, "connector.mlp.order": "columns"}
# how a setting's runs were made: runs made otherwise are redone
MODE_KEYS = ("steps", "heldout", "stop", "language", "train_curve")
SETTINGS: dict[str, dict] = {
    "before (rows, lr 1e-3)": BEFORE,
    "rows + learned positions": {**BEFORE, "connector.mlp.positions": True},
    "columns": COLUMNS,
    "columns + learned positions": {**COLUMNS, "connector.mlp.positions": True},
    "columns, lr 2e-3": {**COLUMNS, "train.lr": 2e-3},
    "columns, lr 2e-3, warmup 5% + cosine": {**COLUMNS, "train.lr": 2e-3, "train.stage1_schedule": "cosine",
                                             "train.stage1_warmup": 0.05},
    "columns, last layer x0.1 at init": {**COLUMNS, "connector.mlp.init_scale": 0.1},
    "columns, LayerNorm on features": {**COLUMNS, "connector.mlp.norm": True},
    "columns, batch 8": {**COLUMNS, "train.batch_size": 8},
    "columns, 16 tokens (merge 4)": {**COLUMNS, "connector.mlp.merge": 4},
}


def apply_overrides(raw: dict, overrides: dict) -> Params:
    """params.yaml's mapping with dotted-key overrides of keys under `shapes:` (train.lr, connector.mlp.merge, ...),
    validated like params.yaml itself."""
    raw = copy.deepcopy(raw)
    for key, value in overrides.items():
        node = raw.setdefault("shapes", {})
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return Params.parse(raw)


def model_label(name: str) -> str:
    """A language model's name for the table: its file's or directory's name, or the name as given."""
    path = Path(name).expanduser()
    return path.stem if path.suffix.lower() == ".gguf" else (path.name if path.exists() else name)


def parse_override(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise FrozenbridgeError(f"--setting: {text!r} is not key=value (e.g. train.lr=2e-3)")
    key, value = text.split("=", 1)
    return key, read_yaml(value)
