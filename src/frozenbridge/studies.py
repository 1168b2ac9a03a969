"""The studies that share params.yaml. Each owns some of its top-level keys; a study's validator lets the others'
keys pass, so a new study adds its section here and in its own params module, never in the core's parser."""

from __future__ import annotations

import dataclasses
import importlib

STUDY_PARAMS = {
    "shapes": "frozenbridge.shapes.params:Params",
    "digits": "frozenbridge.digits.params:Params",
    "retrieval": "frozenbridge.retrieval.params:Params",
}


def top_level_keys() -> tuple[str, ...]:
    """Every top-level params.yaml key some study owns."""
    keys: set[str] = set()
    for spec in STUDY_PARAMS.values():
        module, name = spec.split(":")
        keys.update(f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name)))
    return tuple(sorted(keys))
