"""Why a sweep run fell short, from its own logs (comparison/sweep/diagnosis.py): the curve's state at its end and
what the design did inside, each judged by a line declared before any run."""

from __future__ import annotations

import pytest

from frozenbridge.comparison.sweep.diagnosis import (CLOSED, COLLAPSED, FEW_CODES, LOSS_FALLING, curve_state,
                                                     loss_still_falling, why_short)
from frozenbridge.comparison.sweep.plan import Plan

PLAN = Plan(threshold=60, every=50, cap=400, checks=2, gain=2.0, after=0, rule="fewest_steps_then_best_at_cap",
            grids=())


def _curve(*shares):
    return [[50 * (i + 1), float(s), 0.5] for i, s in enumerate(shares)]


def test_a_run_that_reached_the_threshold_has_nothing_to_explain():
    assert why_short({"curve": _curve(10, 30, 61), "inside": []}, PLAN) == ""


def test_the_curve_says_still_rising_or_flat_from_where_its_last_flat_stretch_began():
    assert curve_state(_curve(0, 5, 10, 20, 30), PLAN) == "still rising at step 250"
    # flat once 2 checks add less than 2 points: 20 at step 150, then 21 and 20
    assert curve_state(_curve(0, 10, 20, 21, 20), PLAN) == "flat from step 250 (2 checks added less than 2 points)"
    # a curve flat early, rising, then flat again: the last stretch
    assert curve_state(_curve(0, 0, 0, 20, 40, 41, 40), PLAN) == \
        "flat from step 350 (2 checks added less than 2 points)"



def test_a_flat_curve_whose_loss_still_fell_says_so():
    """The flat stop reads the exact share alone: where the loss fell by more than LOSS_FALLING over the flat
    stretch (the mean of its first two points against its last two), the page says a slow learner may have been cut
    short."""
    def losses(*values):
        return [[50 * (i + 1), 0.0, v] for i, v in enumerate(values)]

    falling = losses(5.0, 4.5, 4.0, 4.0, 3.0, 3.0)  # flat from step 150: 4.0, 4.0, 3.0, 3.0
    assert loss_still_falling(falling, PLAN) == (
        "Its loss still fell 25% over the flat stretch (4 to 3, means of its first and last two points): the flat "
        "stop reads the exact share alone, so it may have cut a slow learner short.")
    assert why_short({"curve": falling, "inside": []}, PLAN) == (
        "never 60%: flat from step 150 (2 checks added less than 2 points). " + loss_still_falling(falling, PLAN))
    assert LOSS_FALLING == 0.1
    assert loss_still_falling(losses(5.0, 4.5, 4.0, 4.0, 3.7, 3.7), PLAN) == ""  # 7.5%: not said
    assert loss_still_falling(losses(5.0, 4.0, 3.0), PLAN) == ""  # a stretch of one point
    assert curve_state(falling, PLAN) == "flat from step 150 (2 checks added less than 2 points)"

@pytest.mark.parametrize("last, crossed", [(COLLAPSED / 2, True), (COLLAPSED + 0.3, False)])
def test_a_resampler_whose_queries_end_below_the_line_has_collapsed(last, crossed):
    looks = [{"step": 0, "query_entropy": [0.99, 0.97], "on_patches": 0.9},
             {"step": 200, "query_entropy": [last, last], "on_patches": 0.6}]
    why = why_short({"curve": _curve(0, 1, 1, 1), "inside": looks}, PLAN)
    assert why.startswith("never 60%: flat from step")
    assert f"spread went from 0.98 (step 0) to {last:.2f} (step 200)" in why
    assert ("collapsed" in why) is crossed


@pytest.mark.parametrize("gates, crossed", [([0.01, -CLOSED / 2], True), ([0.01, -0.4], False)])
def test_cross_attention_whose_gates_all_end_below_the_line_kept_them_shut(gates, crossed):
    looks = [{"step": 0, "gates": [0.0, 0.0]}, {"step": 400, "gates": gates}]
    why = why_short({"curve": _curve(0, 5, 10, 20), "inside": looks}, PLAN)
    assert why.startswith("never 60%: still rising at step 200")
    assert f"largest |tanh| went from 0 (step 0) to {max(abs(g) for g in gates):.3g} (step 400)" in why
    assert ("nearly shut" in why) is crossed


@pytest.mark.parametrize("share, crossed", [(FEW_CODES / 2, True), (FEW_CODES * 3, False)])
def test_a_codebook_that_uses_few_of_its_codes(share, crossed):
    looks = [{"step": 400, "codes_used": int(share * 1024), "codes_share": share}]
    why = why_short({"curve": _curve(0, 5, 10, 20), "inside": looks}, PLAN)
    assert f"it used {int(share * 1024):,} codes" in why and ("same few tokens" in why) is crossed


def test_a_design_that_logs_nothing_gives_its_curve_alone():
    assert why_short({"curve": _curve(0, 5, 10, 20), "inside": []}, PLAN) == "never 60%: still rising at step 200."
