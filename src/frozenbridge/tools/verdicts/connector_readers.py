"""Readers of the connector comparison (results/connectors/, made by `python -m frozenbridge.tools.connectors`): one
design's exact match beside another's, paired by replicate, in points. The MLP's are the default run's own
(metrics/shapes/). Captions come from stage 1's runs, the questions from caption_qa's."""

from __future__ import annotations

from typing import Callable

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.shapes.report.connectors import designs
from frozenbridge.tools.verdicts.readers import Sources
from frozenbridge.tools.verdicts.rules import Evidence, paired_cell

COMMAND = "python -m frozenbridge.tools.connectors"
RECIPE = {"caption": "caption", "count": "caption_qa", "binding": "caption_qa", "leftmost": "caption_qa"}


def versus(first: str, second: str, cells: tuple[tuple[str, str], ...]) -> Callable[[Sources], Evidence]:
    """Paired cells, one per (test, task): first − second per replicate, exact-match points."""
    def read(s: Sources) -> Evidence:
        found = designs(s.root)
        missing = [name for name in (first, second) if name not in found]
        if missing:
            others = [name for name in missing if name != "mlp"]
            return Evidence(missing=f"{COMMAND} --only {' '.join(others)}" if others else COMMAND)
        a, b = (read_json_if_present(found[name][1] / "replicates.json") for name in (first, second))
        if a is None or b is None:
            return Evidence(missing="dvc repro shapes_summarize")
        out, parts = [], []
        for test, task in cells:
            ra, rb = a[RECIPE[task]][test][task], b[RECIPE[task]][test][task]
            reps = sorted(set(ra) & set(rb), key=int)
            diffs = [round(ra[k]["right"] - rb[k]["right"], 2) for k in reps]
            out.append(paired_cell(f"{test} {task}", diffs, 100))
            parts.append(f"{test} {task} {', '.join(f'{d:+g}' for d in diffs)}")
        return Evidence(out, f"{first} − {second}, exact-match points per replicate: " + "; ".join(parts),
                        f"results/connectors/{first}, {second}")
    return read
