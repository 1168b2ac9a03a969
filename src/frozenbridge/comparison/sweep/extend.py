"""A design's grid grown past the edge of its pick, by a rule fixed before the runs it adds: the issue asks that a
chosen setting at the edge of its grid be followed past that edge, and the step is not chosen after the numbers.

When the pick over a design's settings has a swept number at the grid's smallest or largest value (pick._edges), one
setting is added for each such key: the pick with that key moved one step past the edge. The step is the one between
the edge and its nearest neighbour in the grid: a ratio when both are above 0 and one is at least twice the other (a
learning rate picked at 3e-3, the largest, above 1e-3: 9e-3 next), a difference otherwise (a gate start picked at 0.5,
above 0: 1.0 next). No step is taken from 0 (a gate start of 0 is not followed to -0.5). The added settings are run,
the pick is made again over the grown grid, and this repeats up to the plan's `extend` times. Values keep 3
significant digits and stay integers where the grid's were.
"""

from __future__ import annotations

from typing import Callable

from frozenbridge.comparison.sweep.pick import pick
from frozenbridge.comparison.sweep.plan import Plan, Setting, Value, short_labels, slug


def step_past(edge: Value, neighbour: Value) -> Value | None:
    """The next value past `edge`, away from `neighbour` (see the module's docstring); None from 0. (A difference is
    taken only where the ratio is under 2 or the signs differ, so a step from a value other than 0 never crosses 0.)"""
    if edge == 0:
        return None
    if edge > 0 and neighbour > 0 and max(edge, neighbour) / min(edge, neighbour) >= 2:
        new = edge * edge / neighbour
    else:
        new = edge + (edge - neighbour)
    if isinstance(edge, int) and isinstance(neighbour, int):
        return int(round(new))
    return float(f"{new:.3g}")


def past_edges(chosen: dict, grid: tuple[Setting, ...]) -> list[Setting]:
    """One setting per edge of the pick `chosen`: its values with that key one step past the edge, those that are not
    already in the grid."""
    labels = short_labels({k for s in grid for k in s.as_dict()})
    have = {s.values for s in grid}
    added = []
    for edge in chosen["edges"]:
        key, value = edge["key"], edge["value"]
        tried = sorted({v for s in grid if _is_number(v := s.as_dict().get(key))})
        inner = [v for v in tried if (v < value if edge["side"] == "largest" else v > value)]
        if not inner:
            continue
        new = step_past(value, max(inner) if edge["side"] == "largest" else min(inner))
        if new is None:
            continue
        values = {**chosen["values"], key: new}
        setting = Setting(slug(values, {k: labels.get(k, k) for k in values}), tuple(sorted(values.items())))
        if setting.values not in have:
            added.append(setting)
            have.add(setting.values)
    return added


def extended_grid(plan: Plan, design: str, row_of: Callable[[Setting], dict | None]) -> tuple[Setting, ...]:
    """The design's declared settings, then those added past the edges of its pick, round after round, while every
    setting so far has a row (`row_of` gives it, or None) and the plan's `extend` rounds last."""
    settings = tuple(plan.grid(design))
    for _ in range(plan.extend):
        rows = [row_of(s) for s in settings]
        if any(r is None for r in rows):
            break
        added = past_edges(pick(rows, plan, design, grid=settings), settings)
        if not added:
            break
        settings += tuple(added)
    return settings


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
