"""Why a sweep run fell short of the threshold, read from its own logs: the learning curve (still rising at its end,
or flat) and what the design did inside between its first and last look (run.json's `inside`). Each reading is a
number from the row beside the line it is judged by; the lines are declared here, before any run is read:

- a resampler whose queries' attention spread (entropy over the patches, as a share of the most) ends below
  COLLAPSED has collapsed: each query reads a handful of patches (a spread of s over n patches is about n**s of
  them), so the image tokens can no longer say where everything is;
- a cross-attention model whose gates all end with |tanh| below CLOSED has kept them nearly shut: its text barely
  reads the picture;
- a codebook that uses less than FEW_CODES of its codes on the training pictures says little about them: many
  pictures share the same few tokens.

A run that reached the threshold has nothing to explain; a design with no such line gives its curve alone. A curve
that stopped flat says too whether its loss still fell by more than LOSS_FALLING over the flat stretch (the mean of
its first two points against its last two; a stretch of four points or more): then the flat stop, which reads the
exact share alone, may have cut a slow learner short. That line was added after the first codebook rows were read;
it says what the rows show and moves no pick.
"""

from __future__ import annotations

from frozenbridge.comparison.sweep.curves import is_flat, steps_to, still_learning, within
from frozenbridge.comparison.sweep.plan import Plan

COLLAPSED = 0.2  # query attention spread: below it, a query reads a handful of patches
CLOSED = 0.05  # |tanh(gate)|: below it for every gate, a block adds next to nothing to the text
FEW_CODES = 0.1  # share of the codebook's codes the training pictures use
LOSS_FALLING = 0.1  # a fall of the loss, as a share of where the flat stretch began, that says it still learned


def curve_state(curve: list, plan: Plan) -> str:
    """"still rising at step 1200" or "flat from step 450 (6 checks added less than 2 points)"."""
    points = within(curve, plan.cap)
    last = points[-1][0]
    if still_learning(points, plan.checks, plan.gain):
        return f"still rising at step {last}"
    return f"flat from step {points[flat_start(points, plan)][0]} ({plan.checks} checks added less than " \
           f"{plan.gain:g} points)"


def flat_start(points: list, plan: Plan) -> int:
    """The index of the first point of the trailing stretch over which the curve stays flat."""
    start = len(points) - 1
    while start > 0 and is_flat(points[:start], plan.checks, plan.gain):
        start -= 1
    return start


def loss_still_falling(curve: list, plan: Plan) -> str:
    """A sentence where a curve that stopped flat still had its loss falling by more than LOSS_FALLING over its flat
    stretch (four points or more); else ""."""
    points = within(curve, plan.cap)
    if not points or still_learning(points, plan.checks, plan.gain):
        return ""
    stretch = points[flat_start(points, plan):]
    if len(stretch) < 4:
        return ""
    began, ended = (sum(p[2] for p in pair) / 2 for pair in (stretch[:2], stretch[-2:]))
    fell = (began - ended) / began if began > 0 else 0.0
    if fell <= LOSS_FALLING:
        return ""
    return (f"Its loss still fell {fell:.0%} over the flat stretch ({began:.3g} to {ended:.3g}, means of its first and "
            "last two points): the flat stop reads the exact share alone, so it may have cut a slow learner short.")


def inside_reading(looks: list[dict]) -> str:
    """What the design did inside from its first look to its last, with the line it crossed where it crossed one;
    empty where the design logs nothing."""
    if not looks:
        return ""
    first, last = looks[0], looks[-1]
    if "query_entropy" in last:
        spread = [sum(look["query_entropy"]) / len(look["query_entropy"]) for look in (first, last)]
        said = f"its queries' attention spread went from {spread[0]:.2f} (step {first['step']}) to {spread[1]:.2f} " \
               f"(step {last['step']})"
        return said + (f", below {COLLAPSED:g}: collapsed, each query reading a handful of patches"
                       if spread[1] < COLLAPSED else "")
    if "gates" in last:
        widest = [max(abs(g) for g in look["gates"]) for look in (first, last)]
        said = f"its gates' largest |tanh| went from {widest[0]:.3g} (step {first['step']}) to {widest[1]:.3g} " \
               f"(step {last['step']})"
        return said + (f", below {CLOSED:g}: nearly shut, so the text barely reads the picture"
                       if widest[1] < CLOSED else "")
    if "codes_share" in last:
        said = f"it used {last['codes_used']:,} codes ({last['codes_share']:.0%}) at step {last['step']}"
        return said + (f", under {FEW_CODES:.0%}: many pictures share the same few tokens"
                       if last["codes_share"] < FEW_CODES else "")
    return ""


def why_short(row: dict, plan: Plan) -> str:
    """One sentence for a run that never reached the threshold within the cap; "" for one that did."""
    if steps_to(within(row["curve"], plan.cap), plan.threshold) is not None:
        return ""
    inside = inside_reading(row.get("inside") or [])
    falling = loss_still_falling(row["curve"], plan)
    return (f"never {plan.threshold:g}%: {curve_state(row['curve'], plan)}" + (f"; {inside}" if inside else "")
            + "." + (f" {falling}" if falling else ""))
