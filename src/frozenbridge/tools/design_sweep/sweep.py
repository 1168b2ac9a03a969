"""The sweep over a plan: each design's settings trained in turn, each row kept the moment its run ends, then each
design's own best picked by the plan's rule and the curves drawn.

Rows live in `<out>/<design>/<setting>.json`, written whole or not at all (core.atomic): a sweep stopped mid-run
loses that run only, and the next call starts at the first setting with no row made under the same plan (a row of
another plan digest is run again). Picks go to `<out>/picked.json`, for the designs whose grid is complete, with the
machine and precision of their rows; the figure to `<out>/curves.png`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

from frozenbridge.core.atomic import write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.tools.design_sweep.pick import pick
from frozenbridge.tools.design_sweep.plan import Plan, Setting, plan_digest

log = logging.getLogger("frozenbridge.sweep")
PICKED, FIGURE = "picked.json", "curves.png"


def row_path(out: Path, design: str, setting: Setting) -> Path:
    return out / design / f"{setting.name}.json"


def kept_row(out: Path, design: str, setting: Setting, plan: Plan) -> dict | None:
    """The setting's row if one was made under this plan, else None."""
    path = row_path(out, design, setting)
    if not path.is_file():
        return None
    row = json.loads(path.read_text())
    return row if row.get("plan") == plan_digest(plan) else None


def todo(out: Path, plan: Plan, designs: tuple[str, ...]) -> list[tuple[str, Setting]]:
    """(design, setting) pairs with no row under this plan, in the plan's order."""
    return [(d, s) for d in designs for s in plan.grid(d) if kept_row(out, d, s, plan) is None]


def run_sweep(plan: Plan, designs: tuple[str, ...], out: Path, train: Callable[[str, Setting], dict]) -> list[Path]:
    """Every setting not yet kept, one after the other; `train(design, setting)` makes a row. Returns the rows
    written by this call."""
    written = []
    missing = todo(out, plan, designs)
    for i, (design, setting) in enumerate(missing, 1):
        log.info("sweep run %d of %d: %s at %s", i, len(missing), design, setting.name)
        row = train(design, setting)
        path = row_path(out, design, setting)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, row)
        written.append(path)
    return written


def picks(plan: Plan, out: Path, rule: str | None = None) -> dict:
    """Each design whose grid is complete under this plan, picked by the plan's rule (`rule`, when given, must be
    it); the designs still missing rows are listed, not picked."""
    chosen, waiting = {}, {}
    for design in plan.designs:
        rows = [kept_row(out, design, s, plan) for s in plan.grid(design)]
        if any(r is None for r in rows):
            waiting[design] = sum(r is None for r in rows)
            continue
        chosen[design] = {**pick(rows, plan, design, rule), "machine": rows[0].get("machine"),
                          "precision": rows[0].get("precision"), "device": rows[0].get("device")}
    return {"plan": plan_digest(plan), "rule": plan.rule, "picked": chosen, "runs_missing": waiting}


def write_picks(plan: Plan, out: Path, rule: str | None = None) -> dict:
    """picks(), refused before anything is read when `rule` is not the plan's, written to <out>/picked.json."""
    if rule is not None and rule != plan.rule:
        raise FrozenbridgeError(f"{plan.source}: picking by rule {rule!r} is refused; the plan declares {plan.rule!r}")
    result = picks(plan, out, rule)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / PICKED, result)
    return result
