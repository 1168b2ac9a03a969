"""The sweep over a plan: each design's settings trained in turn, each row kept the moment its run ends, then each
design's own best picked by the plan's rule and the curves drawn.

Rows live in `<out>/<design>/<setting>.json`, written whole or not at all (core.atomic): a sweep stopped mid-run
loses that run only, and the next call starts at the first setting with no row made under the same plan (a row of
another plan digest is run again). A design's grid is the plan's, then the settings extend.py adds past the edges of
its pick once every setting before them has a row. Picks go to `<out>/picked.json`, for the designs whose grid is
complete, with the machine and precision of the chosen row and every machine the grid's rows ran on; the figure to
`<out>/curves.png`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

from frozenbridge.core.atomic import write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.extend import extended_grid
from frozenbridge.comparison.sweep.pick import pick, pick_at_cap
from frozenbridge.comparison.sweep.plan import Plan, Setting, plan_digest

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


def grid(plan: Plan, out: Path, design: str) -> tuple[Setting, ...]:
    """The design's settings: the plan's grid, then those added past the edges of its pick (extend.py)."""
    return extended_grid(plan, design, lambda s: kept_row(out, design, s, plan))


def todo(out: Path, plan: Plan, designs: tuple[str, ...]) -> list[tuple[str, Setting]]:
    """(design, setting) pairs with no row under this plan, in the plan's order, each grid as its rows grow it."""
    return [(d, s) for d in designs for s in grid(plan, out, d) if kept_row(out, d, s, plan) is None]


def run_sweep(plan: Plan, designs: tuple[str, ...], out: Path, train: Callable[[str, Setting], dict]) -> list[Path]:
    """Every setting not yet kept, one after the other, including those a finished grid adds past the edges of its
    pick; `train(design, setting)` makes a row. Returns the rows written by this call."""
    written = []
    while missing := todo(out, plan, designs):
        design, setting = missing[0]
        log.info("sweep run %d (%d left that are known now): %s at %s", len(written) + 1, len(missing), design,
                 setting.name)
        row = train(design, setting)
        path = row_path(out, design, setting)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, row)
        written.append(path)
    return written


def picks(plan: Plan, out: Path, rule: str | None = None) -> dict:
    """Each design whose grid is complete under this plan, picked by the plan's rule (`rule`, when given, must be
    it), and under `at_cap` by the equal-steps view's (pick.pick_at_cap); the designs still missing rows are listed,
    not picked."""
    chosen, at_cap, waiting = {}, {}, {}
    for design in plan.designs:
        settings = grid(plan, out, design)
        rows = [kept_row(out, design, s, plan) for s in settings]
        if any(r is None for r in rows):
            waiting[design] = sum(r is None for r in rows)
            continue
        chosen[design] = pick(rows, plan, design, rule, grid=settings)
        at_cap[design] = pick_at_cap(rows, plan, design, grid=settings)
        own = next(r for r in rows if r["setting"] == chosen[design]["setting"])
        chosen[design].update(machine=own.get("machine"), precision=own.get("precision"), device=own.get("device"),
                              machines=_machines(rows), extended=[s.name for s in settings[len(plan.grid(design)):]])
        if chosen[design]["at_edge"]:
            chosen[design]["edge"] += _extension_note(len(chosen[design]["extended"]), plan.extend)
    return {"plan": plan_digest(plan), "rule": plan.rule, "picked": chosen, "at_cap": at_cap, "runs_missing": waiting}


def _machines(rows: list[dict]) -> list[str]:
    """The CPUs (or devices) the grid's rows ran on, each once: more than one where sittings on other machines made
    them (their curves then differ by each machine's rounding as well as by setting)."""
    found = [(r.get("machine") or {}).get("cpu_model") or (r.get("machine") or {}).get("device") or r.get("device")
             for r in rows]
    return sorted({str(m) for m in found if m})


def _extension_note(added: int, rounds: int) -> str:
    if not rounds:
        return " (the plan's extend is 0: its grid does not grow past an edge)"
    grew = f"grew by {added} setting{'s' if added != 1 else ''}" if added else "could not grow"
    return f" (its grid {grew} past its edges, in {rounds} round{'s' if rounds != 1 else ''} at most)"


def write_picks(plan: Plan, out: Path, rule: str | None = None) -> dict:
    """picks(), refused before anything is read when `rule` is not the plan's, written to <out>/picked.json."""
    if rule is not None and rule != plan.rule:
        raise FrozenbridgeError(f"{plan.source}: picking by rule {rule!r} is refused; the plan declares {plan.rule!r}")
    result = picks(plan, out, rule)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / PICKED, result)
    return result
