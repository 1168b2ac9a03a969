"""What every study's summary shares: a number's spread over replicates, reading its runs' results, reading a
metrics file that may not exist yet and writing a Markdown table (report tables render what is there)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError


def spread(values, ndigits: int = 6) -> dict:
    """{'median', 'min', 'max'} of `values`, each rounded to `ndigits`."""
    values = list(values)
    return {"median": round(statistics.median(values), ndigits), "min": round(min(values), ndigits),
            "max": round(max(values), ndigits)}


def read_json_if_present(path: str | Path) -> dict | None:
    path = Path(path)
    return json.loads(path.read_text()) if path.is_file() else None


def read_all(folder: Path, *names: str) -> list[dict] | None:
    """The named metrics files of `folder`, or None when any is missing (a table needs them all)."""
    found = [read_json_if_present(Path(folder) / name) for name in names]
    return None if any(f is None for f in found) else found


def markdown_table(caption: str | None, header: list[str], cells, left: int = 1, align: str | None = None) -> list[str]:
    """A Markdown table as lines: the caption and a blank line (when given), the header, the alignment row (the first
    `left` columns left-aligned and the rest right, unless `align` spells it), a row per entry of `cells`, a blank
    line; nothing at all when `cells` is empty."""
    rows = [f"| {' | '.join(str(c) for c in row)} |" for row in cells]
    if not rows:
        return []
    align = align or "|" + "---|" * left + "---:|" * (len(header) - left)
    return [*([caption, ""] if caption else []), f"| {' | '.join(header)} |", align, *rows, ""]


def read_results(paths: dict[tuple, Path], stage: str) -> dict:
    """Every run's result.json, nested by the keys of `paths` ({(tower, replicate): path} -> {tower: {replicate:
    result}}); the first one missing is one line naming it and the stage that writes it."""
    out: dict = {}
    for keys, path in paths.items():
        if not Path(path).is_file():
            raise FrozenbridgeError(f"{path}: not found; run `dvc repro {stage}` first")
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = json.loads(Path(path).read_text())
    return out
