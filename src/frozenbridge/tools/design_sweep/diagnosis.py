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

A run that reached the threshold has nothing to explain; a design with no such line gives its curve alone.
"""

from __future__ import annotations

from frozenbridge.tools.design_sweep.curves import is_flat, steps_to, still_learning, within
from frozenbridge.tools.design_sweep.plan import Plan

COLLAPSED = 0.2  # query attention spread: below it, a query reads a handful of patches
CLOSED = 0.05  # |tanh(gate)|: below it for every gate, a block adds next to nothing to the text
FEW_CODES = 0.1  # share of the codebook's codes the training pictures use


def curve_state(curve: list, plan: Plan) -> str:
    """"still rising at step 1200" or "flat from step 450 (6 checks added less than 2 points)"."""
    points = within(curve, plan.cap)
    last = points[-1][0]
    if still_learning(points, plan.checks, plan.gain):
        return f"still rising at step {last}"
    start = len(points) - 1  # the first point of the trailing stretch over which the curve stays flat
    while start > 0 and is_flat(points[:start], plan.checks, plan.gain):
        start -= 1
    start = points[start][0]
    return f"flat from step {start} ({plan.checks} checks added less than {plan.gain:g} points)"


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
    return (f"never {plan.threshold:g}%: {curve_state(row['curve'], plan)}" + (f"; {inside}" if inside else "")
            + ".")
