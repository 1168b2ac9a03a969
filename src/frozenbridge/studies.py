"""The studies that share params.yaml. Each owns some of its top-level keys; a study's validator lets the others'
keys pass, so a new study adds its section here and in its own params module, never in the core's parser."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

from frozenbridge.core.config import parse, read_params_file
from frozenbridge.core.errors import FrozenbridgeError

STUDY_PARAMS = {
    "shapes": "frozenbridge.shapes.params:Params",
    "digits": "frozenbridge.digits.params:Params",
    "retrieval": "frozenbridge.retrieval.params:Params",
    "onetoken": "frozenbridge.onetoken.params:Params",
}


def top_level_keys() -> tuple[str, ...]:
    """Every top-level params.yaml key some study owns."""
    keys: set[str] = set()
    for spec in STUDY_PARAMS.values():
        module, name = spec.split(":")
        keys.update(f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name)))
    return tuple(sorted(keys))


class StudyParams:
    """Base of each study's top-level Params dataclass: parse or load a whole params.yaml, checking the study's own
    keys and letting every other study's pass."""

    @classmethod
    def parse(cls, raw: Any):
        return parse(cls, raw, "", also_allowed=top_level_keys())

    @classmethod
    def load(cls, path: str | Path = "params.yaml"):
        return cls.parse(read_params_file(path))


def check_replicate(params, replicate: int) -> int:
    """A stage's --replicate must be one of params.yaml's replicates (shared by every study)."""
    if replicate not in params.replicates:
        raise FrozenbridgeError(f"--replicate {replicate} is not in params.yaml replicates {list(params.replicates)}")
    return replicate
