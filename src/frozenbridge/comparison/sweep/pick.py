"""One design's own best setting, picked from its sweep rows by the rule its plan declared before any run.

The one rule (plan.RULES), `fewest_steps_then_best_at_cap`, over every setting of the design's grid, each curve read
up to the plan's cap:

- among the settings whose curve reaches the threshold, the fewest steps to it; ties: the higher best share within
  the cap, then the lower loss at the last point within the cap, then the setting's name;
- when none reaches it, the best share within the cap; ties: the fewer steps to that share, then the name.

The reason is a sentence made of those numbers. `at_edge` says whether the chosen value of a swept number (a key with
more than one number in the grid) is the smallest or the largest the grid tried: the best may lie beyond it.

A row: {"setting": name, "values": {...}, "curve": [[step, exact, loss], ...], "stopped": ..., and where the sweep
writes them "design" and "plan" (the plan_digest it was made under)}. Rows of another plan or another design, rows
of a setting the grid does not declare, and a grid with a setting not yet run are refused: the rule is over the
declared grid, whole.
"""

from __future__ import annotations

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.curves import best_within, check_curve, steps_to, within
from frozenbridge.comparison.sweep.plan import RULES, Plan, Setting, plan_digest, spell


def pick(rows: list[dict], plan: Plan, design: str, rule: str | None = None,
         grid: tuple[Setting, ...] | None = None) -> dict:
    """The design's chosen setting under the plan's rule (`rule`, when given, must be that rule), with the reason,
    its numbers and whether a chosen value sits at the edge of the grid: the plan's grid for the design, or `grid`
    (that grid with the settings extend.py added past its edges)."""
    if plan.rule not in RULES or (rule is not None and rule != plan.rule):
        asked = plan.rule if plan.rule not in RULES else rule
        raise FrozenbridgeError(f"{plan.source}: picking by rule {asked!r} is refused; the plan declares "
                                f"{plan.rule!r} and the rules implemented are: {', '.join(RULES)}")
    grid = plan.grid(design) if grid is None else grid
    runs = _runs(rows, plan, design, grid)
    t, n = f"{plan.threshold:g}", len(grid)
    reached = [r for r in runs if r["steps_to_threshold"] is not None]
    if reached:
        ranked = sorted(reached, key=lambda r: (r["steps_to_threshold"], -r["best"], r["loss"], r["setting"]))
        c = ranked[0]
        among = ("the only setting" if n == 1 else f"the fewest of {n} settings" if len(reached) == n
                 else f"the only one of {n} settings that reaches it" if len(reached) == 1
                 else f"the fewest of the {len(reached)} of {n} settings that reach it")
        reason = f"reaches {t}% exact at step {c['steps_to_threshold']}, {among}" + _steps_tie(ranked)
    else:
        ranked = sorted(runs, key=lambda r: (-r["best"], r["best_step"], r["setting"]))
        c = ranked[0]
        among = "the only setting" if n == 1 else f"the highest of {n} settings"
        reason = (f"no setting reaches {t}% exact by step {plan.cap}; its best within the cap, {c['best']:g}% at "
                  f"step {c['best_step']}, is {among}" + _share_tie(ranked))
    edges = _edges(c["values"], grid)
    return {"design": design, "rule": plan.rule, "plan": plan_digest(plan), "setting": c["setting"],
            "values": c["values"], "steps_to_threshold": c["steps_to_threshold"], "best": c["best"],
            "best_step": c["best_step"], "reason": reason, "at_edge": bool(edges), "edges": edges,
            "edge": "; ".join(f"{e['key']} = {spell(e['value'])} is the {e['side']} value the grid tried: the best "
                              "may lie past it" for e in edges)}


AT_CAP = "best_share_within_cap"  # the equal-steps view's rule: not the plan's, declared by issue 70


def pick_at_cap(rows: list[dict], plan: Plan, design: str, grid: tuple[Setting, ...] | None = None) -> dict:
    """The design's setting for the equal-steps view (comparison.settings): the one whose curve reached the
    highest share within the plan's cap; ties: the fewer steps to that share, then the name. Over the same checked
    rows and grid as `pick`, whatever the plan's own rule."""
    grid = plan.grid(design) if grid is None else grid
    ranked = sorted(_runs(rows, plan, design, grid), key=lambda r: (-r["best"], r["best_step"], r["setting"]))
    c, n = ranked[0], len(grid)
    among = "the only setting" if n == 1 else f"the highest of {n} settings"
    reason = f"its best within {plan.cap} steps, {c['best']:g}% at step {c['best_step']}, is {among}" + \
        _share_tie(ranked)
    return {"design": design, "rule": AT_CAP, "plan": plan_digest(plan), "setting": c["setting"],
            "values": c["values"], "best": c["best"], "best_step": c["best_step"], "reason": reason}


def _runs(rows: list[dict], plan: Plan, design: str, grid: tuple[Setting, ...]) -> list[dict]:
    """Each row checked against the plan, read up to the cap: one dict of its numbers per setting of the grid."""
    digest, declared = plan_digest(plan), {s.name: s for s in grid}
    runs: dict[str, dict] = {}
    for row in rows:
        name = row.get("setting")
        where = f"{plan.source}: {design} row {name!r}"
        if row.get("plan", digest) != digest:
            raise FrozenbridgeError(f"{where} was made under plan {row['plan']}, not this one ({digest}); rerun it "
                                    "under this plan or pick under that one")
        if row.get("design", design) != design:
            raise FrozenbridgeError(f"{where} is a row of design {row['design']!r}")
        if name not in declared:
            raise FrozenbridgeError(f"{where}: not a setting of the plan's grid for {design}: {', '.join(declared)}")
        if name in runs:
            raise FrozenbridgeError(f"{where} appears twice; keep one row a setting")
        values = declared[name].as_dict()
        if row.get("values", values) != values:
            raise FrozenbridgeError(f"{where} has values {row['values']}, not the plan's {values}")
        points = within(check_curve(row.get("curve"), where), plan.cap)
        if not points:
            raise FrozenbridgeError(f"{where}: no curve point at or before the cap (step {plan.cap})")
        best, best_step = best_within(points, plan.cap)
        runs[name] = {"setting": name, "values": values, "steps_to_threshold": steps_to(points, plan.threshold),
                      "best": best, "best_step": best_step, "loss": points[-1][2]}
    missing = [name for name in declared if name not in runs]
    if missing:
        raise FrozenbridgeError(f"{plan.source}: {design} has no row yet for {', '.join(missing)}; the rule picks "
                                "over the whole grid: run the sweep to the end first")
    return list(runs.values())


def _steps_tie(ranked: list[dict]) -> str:
    """What set the chosen setting apart from the next one, when they reach the threshold at the same step."""
    if len(ranked) < 2 or ranked[1]["steps_to_threshold"] != ranked[0]["steps_to_threshold"]:
        return ""
    c, r = ranked[:2]
    if c["best"] != r["best"]:
        return f", tied on steps with {r['setting']} and ahead on best share ({c['best']:g}% against {r['best']:g}%)"
    if c["loss"] != r["loss"]:
        return (f", tied on steps and best share with {r['setting']} and ahead on final loss ({c['loss']:.4g} "
                f"against {r['loss']:.4g})")
    return f", tied with {r['setting']} on steps, best share and final loss: first by name"


def _share_tie(ranked: list[dict]) -> str:
    """What set the chosen setting apart from the next one, when none reaches the threshold and their best is equal."""
    if len(ranked) < 2 or ranked[1]["best"] != ranked[0]["best"]:
        return ""
    c, r = ranked[:2]
    if c["best_step"] != r["best_step"]:
        return (f", tied on best share with {r['setting']} and reached sooner (step {c['best_step']} against "
                f"{r['best_step']})")
    return f", tied with {r['setting']} on best share and its step: first by name"


def _edges(values: dict, grid: tuple[Setting, ...]) -> list[dict]:
    """The chosen numbers that are the smallest or the largest of their key in the grid (keys with one number only
    were not swept)."""
    edges = []
    for key, value in values.items():
        if not _is_number(value):
            continue
        tried = {s.as_dict()[key] for s in grid if key in s.as_dict() and _is_number(s.as_dict()[key])}
        if len(tried) < 2:
            continue
        side = "smallest" if value == min(tried) else "largest" if value == max(tried) else None
        if side:
            edges.append({"key": key, "value": value, "side": side})
    return edges


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
