"""A learning curve and the questions the sweep and its verdicts ask of it, defined once so that the run that stops
early, the pick and the verdicts read a curve the same way.

A curve is a list of points (step, exact, loss), one every `plan.every` steps: `exact` is the percent of exact
captions of the stop rule's training pictures at that step, `loss` the training loss. Definitions:

- steps to a share: the step of the first point whose exact share is at or above it (None when none is).
- best within a cap: the highest share among the points at or before the cap, and the first step it was reached.
- flat, with `checks` = k and `gain` = g: a curve of n points is flat once n >= k + 1 and the best share of its last
  k points is less than g points above the best share of the n - k points before them (k points of training did not
  improve it by g). A curve that reached 100% is flat at once, whatever its length: nothing is left to learn.
- still learning: a curve with at least one point that is not flat at its last point, the judgement at the end of a
  run that stopped at the cap: it might have gone on rising. A curve with no point is neither flat nor still learning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from frozenbridge.core.errors import FrozenbridgeError

if TYPE_CHECKING:
    from frozenbridge.comparison.sweep.plan import Plan

Point = tuple[int, float, float]  # (step, exact percent, loss)
Curve = Sequence[Sequence[float]]  # points as read back from JSON: lists [step, exact, loss]


def check_curve(raw, where: str) -> list[Point]:
    """The curve as (step, exact, loss) tuples, or one line naming `where` and what is wrong with it."""
    if not isinstance(raw, (list, tuple)):
        raise FrozenbridgeError(f"{where}: a curve is a list of [step, exact, loss] points, not {raw!r}")
    points: list[Point] = []
    for i, p in enumerate(raw):
        ok = (isinstance(p, (list, tuple)) and len(p) == 3 and isinstance(p[0], int) and not isinstance(p[0], bool)
              and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p[1:]))
        if not ok or not 0 <= p[1] <= 100 or p[0] < 0:
            raise FrozenbridgeError(f"{where}: point {i} is {p!r}; expected [step, exact, loss], a step >= 0 and an "
                                    "exact share in [0, 100]")
        if points and p[0] <= points[-1][0]:
            raise FrozenbridgeError(f"{where}: point {i} is at step {p[0]}, not after step {points[-1][0]}; steps "
                                    "must increase")
        points.append((p[0], float(p[1]), float(p[2])))
    return points


def within(curve: Curve, cap: int) -> list:
    """The points at or before step `cap`."""
    return [p for p in curve if p[0] <= cap]


def steps_to(curve: Curve, threshold: float) -> int | None:
    """The first step whose exact share is at or above `threshold`, or None when no point reaches it."""
    return next((int(p[0]) for p in curve if p[1] >= threshold), None)


def best_within(curve: Curve, cap: int) -> tuple[float, int]:
    """(best exact share at or before step `cap`, the first step it was reached); refused when no point is."""
    points = within(curve, cap)
    if not points:
        raise FrozenbridgeError(f"a curve with no point at or before step {cap} has no best share")
    best = max(p[1] for p in points)
    return float(best), int(next(p[0] for p in points if p[1] == best))


def share_at(curve: Curve, step: int) -> float:
    """The exact share of the last point at or before `step` (a curve that stopped early keeps its last share)."""
    points = within(curve, step)
    if not points:
        raise FrozenbridgeError(f"a curve with no point at or before step {step} has no share there")
    return float(points[-1][1])


def is_flat(curve: Curve, checks: int, gain: float) -> bool:
    """Flat as the module docstring defines it: 100% reached, or the last `checks` points' best less than `gain`
    points above the best before them."""
    if any(p[1] >= 100 for p in curve):
        return True
    if len(curve) < checks + 1:
        return False
    before, last = curve[:-checks], curve[-checks:]
    return max(p[1] for p in last) < max(p[1] for p in before) + gain


def still_learning(curve: Curve, checks: int, gain: float) -> bool:
    """A curve with points that is not flat at its last point: at the cap, it might have gone on rising."""
    return bool(curve) and not is_flat(curve, checks, gain)


def stop_early(curve: Curve, plan: Plan) -> bool:
    """What a running sweep asks after each point: stop now? At 100% exact, yes; on a flat curve, from the plan's
    `flat.after` step on (before it a curve may sit at 0 while, say, a gate opens)."""
    if curve and curve[-1][1] >= 100:
        return True
    return bool(curve) and curve[-1][0] >= plan.after and is_flat(curve, plan.checks, plan.gain)


def stop_reason(curve: Curve, plan: Plan) -> str | None:
    """Why a run stops after its last point: "flat", "cap" (the plan's most steps reached), or None (go on)."""
    if stop_early(curve, plan):
        return "flat"
    if curve and curve[-1][0] >= plan.cap:
        return "cap"
    return None
