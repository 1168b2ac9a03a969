"""The section-9 claims ("design X beats the MLP") judged at three views of paired learning curves, so that a design
stopped while still rising is never said to lose.

Replicate r of the design is paired with replicate r of the MLP. Each view turns a pair into one difference, positive
when the design is ahead, and the project's paired rule decides (verdicts/rules.py `Ahead("first")`): "holds" when the
exact interval for the median paired difference lies above zero at 90% coverage or more, "does not hold" when it
lies below, "inconclusive" otherwise (it includes zero, or too few replicates reach 90%: five are the fewest).

- equal_steps: the exact share at one step (the default budget's), design minus MLP, in points. A curve that stopped
  early because it was flat keeps its last share; one that stopped before that step still rising is refused.
- steps_to_threshold: steps to the plan's threshold, MLP minus design (fewer is better). A replicate that never
  reaches the threshold within the cap counts as cap + every steps, the first check past the cap where it could
  have: its true count is at least that, so a pair where one side reached it and the other did not gets the right
  sign and a difference no larger than the true one. A pair where neither reached it counts as a tie (0): neither is
  shown to be faster.
- best_within_cap: the best share at or before the cap, design minus MLP, in points.

The regime rule: a view that depends on a curve reaching its best does not call the design behind while the design
was still rising when it stopped (curves.still_learning). In steps_to_threshold, a design replicate that never reached
the threshold and is still learning, and in best_within_cap, any design replicate still learning, turn any verdict
but "holds" into "inconclusive: still learning at step N" (N: that replicate's last step). In best_within_cap the
same holds the other way: an MLP still rising at the cap might yet overtake the design, so "holds" becomes
"inconclusive: the MLP still learning at step N". (An MLP replicate short of the threshold only makes the design's
lead in steps larger than its bound says, so it cannot turn a verdict there.)
"""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.comparison.sweep.curves import (Point, best_within, check_curve, is_flat, share_at, steps_to,
                                                  still_learning, within)
from frozenbridge.comparison.sweep.plan import Plan
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.tools.verdicts.rules import FAILS, HOLDS, OPEN, Ahead, paired_cell

VIEWS = ("equal_steps", "steps_to_threshold", "best_within_cap")


@dataclass(frozen=True)
class Verdict:
    view: str
    verdict: str  # rules.HOLDS, FAILS or OPEN
    reason: str  # one line of the numbers that decided it

    @property
    def text(self) -> str:
        """"inconclusive: still learning at step 1200 (...)", as the page prints it."""
        return f"{self.verdict}: {self.reason}"


def equal_steps(design: list, mlp: list, step: int, plan: Plan, name: str = "design") -> Verdict:
    """Exact share at `step`, design minus MLP per replicate."""
    if not 0 <= step <= plan.cap:
        raise FrozenbridgeError(f"{plan.source}: equal steps at step {step}, outside the sweep's [0, cap {plan.cap}]")
    a, b = _paired(design, mlp, name)
    for who, curves in ((name, a), ("MLP", b)):
        for r, c in enumerate(curves):
            if c[-1][0] < step and not is_flat(c, plan.checks, plan.gain):
                raise FrozenbridgeError(f"{who} replicate {r} stopped at step {c[-1][0]}, before step {step}, still "
                                        "rising: it has no share at that step")
    diffs = [round(share_at(x, step) - share_at(y, step), 4) for x, y in zip(a, b)]
    return _decide("equal_steps", f"{name} − MLP, exact points at step {step}", diffs)


def steps_to_threshold(design: list, mlp: list, plan: Plan, name: str = "design") -> Verdict:
    """Steps to the plan's threshold, MLP minus design per replicate (a replicate short of it counts cap + every)."""
    a, b = _paired(design, mlp, name)
    a, b = [within(c, plan.cap) for c in a], [within(c, plan.cap) for c in b]
    short = plan.cap + plan.every

    def steps(c: list[Point]) -> int:
        reached = steps_to(c, plan.threshold)
        return short if reached is None else reached

    diffs = [steps(y) - steps(x) for x, y in zip(a, b)]
    label = f"MLP − {name}, steps to {plan.threshold:g}% exact (one short of it by step {plan.cap} counts {short})"
    verdict = _decide("steps_to_threshold", label, diffs)
    rising = [r for r, c in enumerate(a) if steps_to(c, plan.threshold) is None and _rising(c, plan)]
    return _unless_rising(verdict, rising, a, "", len(a)) if verdict.verdict != HOLDS else verdict


def best_within_cap(design: list, mlp: list, plan: Plan, name: str = "design") -> Verdict:
    """Best exact share within the cap, design minus MLP per replicate."""
    a, b = _paired(design, mlp, name)
    diffs = [round(best_within(x, plan.cap)[0] - best_within(y, plan.cap)[0], 4) for x, y in zip(a, b)]
    verdict = _decide("best_within_cap", f"{name} − MLP, best exact points within step {plan.cap}", diffs)
    a, b = [within(c, plan.cap) for c in a], [within(c, plan.cap) for c in b]
    if verdict.verdict == HOLDS:
        return _unless_rising(verdict, [r for r, c in enumerate(b) if _rising(c, plan)], b, "the MLP ", len(b))
    return _unless_rising(verdict, [r for r, c in enumerate(a) if _rising(c, plan)], a, "", len(a))


def views(design: list, mlp: list, plan: Plan, step: int, name: str = "design") -> dict[str, Verdict]:
    """The three views of one claim, by name (VIEWS); `step` is the default budget's."""
    return {"equal_steps": equal_steps(design, mlp, step, plan, name),
            "steps_to_threshold": steps_to_threshold(design, mlp, plan, name),
            "best_within_cap": best_within_cap(design, mlp, plan, name)}


def _paired(design: list, mlp: list, name: str) -> tuple[list[list[Point]], list[list[Point]]]:
    """Both sides' curves checked: as many replicates on each side, each with at least one point."""
    if not design or len(design) != len(mlp):
        raise FrozenbridgeError(f"{name} has {len(design)} replicate curves and the MLP {len(mlp)}: a paired verdict "
                                "needs the same replicates on both sides, at least one")
    out = []
    for who, curves in ((name, design), ("MLP", mlp)):
        checked = [check_curve(c, f"{who} replicate {r}") for r, c in enumerate(curves)]
        empty = [r for r, c in enumerate(checked) if not c]
        if empty:
            raise FrozenbridgeError(f"{who} replicate {empty[0]}: an empty curve")
        out.append(checked)
    return out[0], out[1]


def _rising(curve: list[Point], plan: Plan) -> bool:
    return still_learning(curve, plan.checks, plan.gain)


def _decide(view: str, label: str, diffs: list) -> Verdict:
    """The project's paired rule on per-replicate differences (positive: the design ahead)."""
    listed = f"{label}: {', '.join(f'{d:+g}' for d in diffs)}"
    cell = paired_cell(listed, diffs, 100)
    verdict, why = Ahead("first").cell(cell)
    if verdict in (HOLDS, FAILS):  # which side of zero, in words that stay true when a claim expects the MLP ahead
        p = cell.paired
        why = (f"{listed}: interval [{p['interval']['low']:+g}, {p['interval']['high']:+g}] covers the median with "
               f"{100 * p['interval']['coverage']:g}%, {p['replicates']} replicates, "
               f"{'above' if verdict == HOLDS else 'below'} zero")
    return Verdict(view, verdict, why)


def _unless_rising(verdict: Verdict, rising: list[int], curves: list[list[Point]], who: str, n: int) -> Verdict:
    """`verdict`, or inconclusive when replicates of `who` (the design when empty) were still rising at their end."""
    if not rising:
        return verdict
    last = max(curves[r][-1][0] for r in rising)
    which = f"replicate{'s' if len(rising) > 1 else ''} {', '.join(map(str, rising))} of {n}"
    return Verdict(verdict.view, OPEN, f"{who}still learning at step {last} ({which} still rising at the end; "
                                       f"otherwise {verdict.verdict}: {verdict.reason})")
