"""The ways to connect a picture to the frozen language model, one file each, chosen by `shapes.connector.design`
(bridge/design.py says what a design gives and how it is found). This package's own module imports nothing, so
params validation can list the designs without torch."""

from __future__ import annotations

from pathlib import Path


def design_names() -> tuple[str, ...]:
    """The designs there are: the names of this folder's files, none of them imported."""
    return tuple(sorted(p.stem for p in Path(__file__).parent.glob("*.py") if not p.name.startswith("_")))
