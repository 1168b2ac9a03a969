"""The sweep's table for docs/connectors.md: per design, each setting at the three views of its curve (the exact
share at the default run's stage-1 budget, its fewest and most steps: equal steps; the steps to the threshold; the
best share within the cap), why it stopped and what the design did inside at its last look, the pick by the plan's
rule, why each setting that fell short did (diagnosis.py), and the figure; or what to run while nothing is kept."""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.comparison.sweep.curves import best_within, share_at, steps_to
from frozenbridge.comparison.sweep.diagnosis import why_short
from frozenbridge.comparison.sweep.plan import DEFAULT_PATH, load_plan
from frozenbridge.comparison.sweep.sweep import FIGURE, PICKED, grid, kept_row

COMMAND = "python -m frozenbridge.comparison.sweep"
BUSY = 0.5  # a run's mean load average this far above its own threads: other work shared the machine, and its time


def _inside(row: dict) -> str:
    looks = row.get("inside") or []
    if not looks:
        return "—"
    last = looks[-1]
    if "gates" in last:
        return f"gates {min(last['gates']):.2f}–{max(last['gates']):.2f} (step {last['step']})"
    if "query_entropy" in last:
        return f"spread {sum(last['query_entropy']) / len(last['query_entropy']):.2f} (step {last['step']})"
    if "codes_used" in last:
        return f"{last['codes_used']:,} codes"
    return "—"


def _size(row: dict) -> str:
    n = row.get("connector_params")
    return "—" if n is None else f"{n / 1e6:.2f}M" if n >= 10_000 else f"{n:,}"


def _seconds(row: dict) -> str:
    """The run's seconds a step, marked where the machine's load says other work ran beside it (rows made before
    the load was kept say nothing)."""
    if row.get("step_seconds") is None:
        return "—"
    loads, threads = row.get("load_average") or [], row.get("threads")
    load = sum(loads) / len(loads) if loads else None
    shared = load is not None and threads and load > threads + BUSY
    return f"{row['step_seconds']:.2f}" + (f" (shared: load {load:.1f} on {threads} threads)" if shared else "")


def _machines_note(choice: dict) -> str:
    """Where a design's rows came from sittings on several machines: its curves then differ by each machine's bf16
    rounding as well as by setting (picks made before picked.json listed machines say nothing)."""
    machines = choice.get("machines") or []
    if len(machines) < 2:
        return ""
    own = (choice.get("machine") or {}).get("cpu_model") or (choice.get("machine") or {}).get("device")
    return (f" Its grid ran on {len(machines)} machines ({', '.join(machines)}; the pick's own row on {own}): its "
            "curves differ by each machine's rounding as well as by setting.")


def budget_steps(root: Path, cap: int) -> list[int]:
    """The default run's stage-1 budget in params.yaml, its fewest steps and its most (stage1_steps and
    stage1_until.max_steps; the fewest alone where stage1_until.share is 0), those within the cap: where the equal-steps
    view reads each curve."""
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    train = ((params or {}).get("shapes") or {}).get("train") or {}
    until = train.get("stage1_until") or {}
    fewest = train.get("stage1_steps", 200)
    steps = {fewest} | ({until.get("max_steps", 600)} if until.get("share", 0.6) else set())
    return sorted(s for s in steps if 0 < s <= cap)


def sweep_findings(root: Path) -> list[str]:
    plan_file = root / DEFAULT_PATH
    if not plan_file.is_file():
        return []
    plan = load_plan(plan_file)
    out = root / DEFAULT_PATH.parent
    picked = json.loads((out / PICKED).read_text()) if (out / PICKED).is_file() else {"picked": {}}
    grids = {d: grid(plan, out, d) for d in plan.designs}  # each grown past its edges once
    rows = [(d, s, kept_row(out, d, s, plan)) for d, settings in grids.items() for s in settings]
    added = {(d, s.name) for d, settings in grids.items() for s in settings[len(plan.grid(d)):]}
    done = [(d, s, r) for d, s, r in rows if r is not None]
    head = (f"**The sweep** (`{COMMAND}`, plan `{DEFAULT_PATH}`: rule {plan.rule}, threshold {plan.threshold:g}%, "
            f"cap {plan.cap} steps, a pick at its grid's edge followed past it up to {plan.extend} times "
            f"(`comparison/sweep/extend.py`), replicate 0's stage 1): {len(done)} of {len(rows)} settings run.")
    if not done:
        return [head + f" Nothing is kept yet: `{COMMAND}` runs them.", ""]
    equal = budget_steps(root, plan.cap)
    views = (f"the exact share at the default run's stage-1 budget ({' and '.join(f'step {s}' for s in equal)}: "
             "equal steps), " if equal else "")
    lines = [head + f" The views of each curve: {views}the steps to {plan.threshold:g}%, and the best share within "
                    "the cap. Seconds a step are the run's own training time over its steps, without the curve's "
                    f"evaluations. A time is marked where the machine's mean load was more than {BUSY:g} above the "
                    "run's threads: other work shared the machine. `bench designs` times each design alone.", "",
             f"| design | setting | {''.join(f'% at step {s} | ' for s in equal)}steps to {plan.threshold:g}% | "
             "best % (step) | stopped (% there) | inside, last look | trained parameters | s a step | "
             "machine, precision |",
             "|---|---|" + "---:|" * len(equal) + "---:|---:|---|---|---:|---:|---|"]
    for design, setting, row in done:
        chosen = picked["picked"].get(design, {}).get("setting") == setting.name
        reached = steps_to(row["curve"], plan.threshold)
        best, at = best_within(row["curve"], plan.cap)
        why = "all exact" if row["curve"][-1][1] >= 100 else row["stopped"]  # 100% stops a run as a flat curve does
        at_steps = "".join(f"{share_at(row['curve'], s):g} | " for s in equal)
        past = " (past the grid's edge)" if (design, setting.name) in added else ""
        lines.append(f"| {design} | {setting.name}{past}{' ◀' if chosen else ''} | {at_steps}{reached or 'never'} | "
                     f"{best:g} ({at}) | "
                     f"{why} at {row['steps']} ({row['curve'][-1][1]:g}) | {_inside(row)} | {_size(row)} | "
                     f"{_seconds(row)} | "
                     f"{row['machine'].get('cpu_model') or row['machine'].get('device')}, {row['precision']} |")
    lines.append("")
    for design, choice in picked["picked"].items():
        lines.append(f"- {design}: {choice['setting']} ◀, {choice['reason']}." + (f" {choice['edge']}." if choice[
            "edge"] else "") + _machines_note(choice))
    short = [(design, setting.name, why) for design, setting, row in done if (why := why_short(row, plan))]
    if short:
        lines += ["", "What the logs say of each setting that fell short (the curve, and what the design did inside; "
                      "the lines it is judged by are declared in `comparison/sweep/diagnosis.py`):", ""]
        lines += [f"- {design} {name}: {why}" for design, name, why in short]
    if (out / FIGURE).is_file():
        lines += ["", f"![Learning curves of the sweep, one panel a design](../{DEFAULT_PATH.parent / FIGURE})"]
    return lines + [""]
