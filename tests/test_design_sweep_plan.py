"""The design sweep's logic on made-up plans and curves: the declared plan and its refusals, the curve questions, the
pick by the declared rule, and the three regime views, where a design still rising at the cap is never said to lose."""

from __future__ import annotations

import pytest
import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.curves import (best_within, is_flat, share_at, steps_to, still_learning, stop_early,
                                                  stop_reason)
from frozenbridge.comparison.sweep.pick import pick
from frozenbridge.comparison.sweep.plan import load_plan, plan_digest, short_labels, slug
from frozenbridge.tools.verdicts.regime import best_within_cap, equal_steps, steps_to_threshold, views
from frozenbridge.tools.verdicts.rules import FAILS, HOLDS, OPEN

PLAN = {
    "threshold": 60, "every": 50, "cap": 400, "flat": {"checks": 3, "gain": 2.0, "after": 0},
    "rule": "fewest_steps_then_best_at_cap", "extend": 2,
    "grids": {"mlp": [{"train.lr": 1.0e-4}, {"train.lr": 3.0e-4}, {"train.lr": 1.0e-3}, {"train.lr": 3.0e-3}],
              "cross_attention": [{"train.lr": 1.0e-3, "connector.cross_attention.gate_init": 0.5},
                                  {"train.lr": 1.0e-3, "connector.cross_attention.gate_init": 0.0}]},
}
MLP_NAMES = ["lr=0.0001", "lr=0.0003", "lr=0.001", "lr=0.003"]


def write(tmp_path, content: dict | str, name: str = "plan.yaml"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
    return path


def changed(**edits) -> dict:
    plan = yaml.safe_load(yaml.safe_dump(PLAN))
    for key, value in edits.items():
        *parents, last = key.split("__")
        where = plan
        for p in parents:
            where = where[p]
        if value is ...:
            del where[last]
        else:
            where[last] = value
    return plan


@pytest.fixture()
def plan(tmp_path):
    return load_plan(write(tmp_path, PLAN))


def curve(shares, every=50, loss=1.0):
    """Points every `every` steps from step `every`, loss falling as 1/point."""
    return [[every * (i + 1), float(s), round(loss / (i + 1), 4)] for i, s in enumerate(shares)]


# the plan

def test_a_plan_file_loads_with_its_settings_named(tmp_path, plan):
    assert (plan.threshold, plan.every, plan.cap, plan.checks, plan.gain, plan.extend) == (60.0, 50, 400, 3, 2.0, 2)
    assert plan.designs == ("mlp", "cross_attention")
    assert [s.name for s in plan.grid("mlp")] == MLP_NAMES
    assert [s.name for s in plan.grid("cross_attention")] == ["gate_init=0.5,lr=0.001", "gate_init=0.0,lr=0.001"]
    assert plan.grid("cross_attention")[0].as_dict() == {"connector.cross_attention.gate_init": 0.5, "train.lr": 1e-3}
    with pytest.raises(FrozenbridgeError, match="no grid for design 'resampler'; the plan sweeps: mlp, cross_att"):
        plan.grid("resampler")


def test_the_digest_follows_content_not_spelling(tmp_path, plan):
    reordered = {k: PLAN[k] for k in reversed(list(PLAN))}
    same = load_plan(write(tmp_path, "# a comment\n" + yaml.safe_dump(reordered, sort_keys=False), "b.yaml"))
    assert plan_digest(same) == plan_digest(plan) and len(plan_digest(plan)) == 12
    assert plan_digest(load_plan(write(tmp_path, changed(cap=450), "c.yaml"))) != plan_digest(plan)
    other_grid = changed(grids__mlp=[{"train.lr": 1.0e-4}, {"train.lr": 3.0e-4}])
    assert plan_digest(load_plan(write(tmp_path, other_grid, "d.yaml"))) != plan_digest(plan)
    # how often a grid may grow past its edges is not in it: the rows made before it changed stay valid
    assert plan_digest(load_plan(write(tmp_path, changed(extend=0), "e.yaml"))) == plan_digest(plan)


BAD = [
    (changed(thresold=60), "unknown key thresold; allowed keys: cap, every, extend, flat, grids, rule, threshold"),
    (changed(cap=...), "missing key cap; a plan declares every one of threshold, every, cap, flat, rule, extend, "
                       "grids"),
    (changed(flat__gain=...), "missing key flat.gain"),
    (changed(flat__patience=2), "unknown key flat.patience"),
    (changed(cap=420), "cap = 420 is not allowed; expected a multiple of every (50)"),
    (changed(threshold=0), "threshold = 0 is not allowed; expected a number in (0, 100]"),
    (changed(threshold=101), "threshold = 101 is not allowed"),
    (changed(threshold="60"), "threshold = '60' is not allowed"),
    (changed(every=0), "every = 0 is not allowed; expected an integer >= 1"),
    (changed(every=2.5), "every = 2.5 is not allowed"),
    (changed(flat__checks=0), "flat.checks = 0 is not allowed"),
    (changed(extend=-1), "extend = -1 is not allowed; expected an integer >= 0"),
    (changed(extend=...), "missing key extend"),
    (changed(grids={}), "grids = {} is not allowed; expected a mapping of design names"),
    (changed(grids__mlp=[]), "grids.mlp = [] is not allowed; expected a non-empty list of settings"),
    (changed(grids__mlp=[{"train.lr": 1e-3}, {"train.lr": 0.001}]),
     "grids.mlp[1] = {'train.lr': 0.001} is not allowed; expected a setting not already in the grid (it repeats "
     "grids.mlp[0])"),
    (changed(grids__mlp=[{"train.batch_size": 8}, {"train.batch_size": 8.0}]), "(it repeats grids.mlp[0])"),
    (changed(grids__mlp=[{"train.lr": [1e-3, 3e-3]}]), "grids.mlp[0].train.lr = [0.001, 0.003] is not allowed"),
    (changed(grids__mlp=[{"train lr": 1e-3}]), "grids.mlp[0] = 'train lr' is not allowed; expected keys that are"),
    (changed(grids__mlp=[{}]), "grids.mlp[0] = {} is not allowed"),
    (changed(rule="best_at_cap"), "rule = 'best_at_cap' is not allowed; expected one of "
                                  "['fewest_steps_then_best_at_cap']"),
]


@pytest.mark.parametrize("content, message", BAD, ids=[m.split(" ")[0] + str(i) for i, (_, m) in enumerate(BAD)])
def test_a_bad_plan_fails_in_one_line_naming_the_file_and_key(tmp_path, content, message):
    path = write(tmp_path, content)
    with pytest.raises(FrozenbridgeError) as err:
        load_plan(path)
    text = str(err.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert message in text


def test_a_missing_or_unreadable_plan_names_the_file(tmp_path):
    with pytest.raises(FrozenbridgeError, match="nowhere.yaml: not found"):
        load_plan(tmp_path / "nowhere.yaml")
    with pytest.raises(FrozenbridgeError, match="bad.yaml: not valid YAML"):
        load_plan(write(tmp_path, "grids: [unclosed", "bad.yaml"))


def test_names_are_stable_and_distinct_and_lengthen_only_keys_that_collide(tmp_path):
    assert slug({"train.lr": 1e-3, "connector.gate_init": 0.5}) == slug({"connector.gate_init": 0.5, "train.lr": 1e-3})
    assert slug({"train.lr": 1e-5, "train.warmup": 0, "x.on": True, "x.kind": "cosine", "x.z": None}) == \
        "lr=1e-05,warmup=0,kind=cosine,on=true,z=null"  # sorted by the whole key
    assert short_labels({"train.lr", "connector.gate.lr", "connector.gate.init"}) == \
        {"train.lr": "train.lr", "connector.gate.lr": "gate.lr", "connector.gate.init": "init"}
    assert short_labels({"lr", "train.lr"}) == {"lr": "lr", "train.lr": "train.lr"}
    grid = changed(grids__mlp=[{"train.lr": 1e-3, "connector.gate.lr": 1e-2}, {"train.lr": 1e-3,
                                                                              "connector.gate.lr": 1e-3}])
    names = [s.name for s in load_plan(write(tmp_path, grid)).grid("mlp")]
    assert names == ["gate.lr=0.01,train.lr=0.001", "gate.lr=0.001,train.lr=0.001"]


# curves

RISING = curve([5, 10, 15, 20, 25, 30, 35, 40])  # +5 every point to the cap (400)
PLATEAU = curve([20, 40, 60, 70, 71, 71, 70, 71])  # last 3 best 71, best before 71: flat


def test_steps_to_and_best_within():
    assert steps_to([], 60) is None
    assert steps_to(PLATEAU, 60) == 150 and steps_to(PLATEAU, 60.5) == 200 and steps_to(RISING, 60) is None
    assert best_within(PLATEAU, 400) == (71.0, 250)  # first step at the best share
    assert best_within(PLATEAU, 200) == (70.0, 200)  # nothing after the cap counts
    with pytest.raises(FrozenbridgeError, match="no point at or before step 400"):
        best_within([], 400)
    assert share_at(PLATEAU, 225) == 70.0 and share_at(PLATEAU, 10_000) == 71.0


def test_flat_and_still_learning():
    assert not is_flat([], 3, 2.0) and not still_learning([], 3, 2.0)
    assert not is_flat(PLATEAU[:3], 3, 2.0)  # fewer than checks + 1 points: too soon to tell
    assert is_flat(PLATEAU, 3, 2.0) and not still_learning(PLATEAU, 3, 2.0)
    assert not is_flat(RISING, 3, 2.0) and still_learning(RISING, 3, 2.0)
    assert not is_flat(curve([50, 51, 52, 52]), 3, 2.0)  # a rise of exactly `gain` is still learning
    assert is_flat(curve([50, 51, 51.9, 51]), 3, 2.0)  # a rise just under it is flat
    assert is_flat(curve([100]), 3, 2.0) and not still_learning(curve([40, 100]), 3, 2.0)


def test_a_running_sweep_stops_when_flat_or_at_the_cap(plan):
    assert not stop_early(RISING[:5], plan) and stop_reason(RISING[:5], plan) is None
    assert not stop_early(PLATEAU[:6], plan)  # 71 at the last 3 points against 60 before: still rising
    assert stop_early(PLATEAU[:7], plan) and stop_reason(PLATEAU[:7], plan) == "flat"
    assert stop_reason(RISING, plan) == "cap"
    assert stop_early(curve([30, 100]), plan)


def test_no_run_stops_for_a_flat_curve_before_the_plans_after_step(plan):
    """A curve at 0 for its first points (a gate still closed) is flat by the numbers; before `flat.after` it goes
    on; 100% stops it at any step."""
    import dataclasses

    waiting = dataclasses.replace(plan, after=300)
    zeros = curve([0, 0, 0, 0, 0])  # steps 50..250
    assert is_flat(zeros, 3, 2.0) and stop_early(zeros, plan)
    assert not stop_early(zeros, waiting) and stop_reason(zeros, waiting) is None
    assert stop_early(curve([0, 0, 0, 0, 0, 0]), waiting)  # step 300: from then on, flat stops it
    assert stop_early(curve([40, 100]), waiting)


# the pick

def rows(p, design, curves, **extra):
    return [{"setting": s.name, "values": s.as_dict(), "curve": c, "stopped": "cap", **extra}
            for s, c in zip(p.grid(design), curves)]


def test_pick_takes_the_fewest_steps_to_the_threshold(plan):
    got = pick(rows(plan, "mlp", [RISING, curve([10, 30, 50, 65, 70, 70, 70, 70]), PLATEAU,
                                 curve([30, 50, 55, 90, 95, 95, 95, 95])]), plan, "mlp")
    assert got["setting"] == "lr=0.001"  # 60% at step 150; lr=0.003 gets higher (95) but reaches 60 at step 200
    assert got["reason"] == "reaches 60% exact at step 150, the fewest of the 3 of 4 settings that reach it"
    assert (got["steps_to_threshold"], got["best"], got["best_step"]) == (150, 71.0, 250)
    shares = [20, 40, 60, 70, 71, 71, 70, 71]
    every_one = pick(rows(plan, "mlp", [curve(shares), curve(shares[1:]), curve([50, 55, 58, 61, 62, 62, 62]),
                                       curve(shares[2:])]), plan, "mlp")
    assert every_one["setting"] == "lr=0.003" and every_one["reason"] == \
        "reaches 60% exact at step 50, the fewest of 4 settings"


def test_pick_ties_on_steps_go_to_the_best_share_then_the_loss_then_the_name(plan):
    lower_best = curve([20, 40, 60, 65, 66, 66, 66, 66])
    got = pick(rows(plan, "mlp", [RISING, RISING, PLATEAU, lower_best]), plan, "mlp")
    assert got["setting"] == "lr=0.001"
    assert got["reason"] == ("reaches 60% exact at step 150, the fewest of the 2 of 4 settings that reach it, tied on "
                             "steps with lr=0.003 and ahead on best share (71% against 66%)")
    got = pick(rows(plan, "mlp", [RISING, RISING, PLATEAU, curve(
        [20, 40, 60, 70, 71, 71, 70, 71], loss=0.5)]), plan, "mlp")
    assert got["setting"] == "lr=0.003" and "ahead on final loss (0.0625 against 0.125)" in got["reason"]
    got = pick(rows(plan, "mlp", [RISING, RISING, PLATEAU, PLATEAU]), plan, "mlp")
    assert got["setting"] == "lr=0.001" and got["reason"].endswith("first by name")


def test_pick_falls_back_to_the_best_share_within_the_cap(plan):
    slow = curve([5, 10, 20, 30, 40, 45, 50, 55])
    early = curve([10, 45, 46, 46, 45, 45, 45, 45])
    got = pick(rows(plan, "mlp", [RISING, slow, early, curve([0] * 8)]), plan, "mlp")
    assert got["setting"] == "lr=0.0003" and got["steps_to_threshold"] is None
    assert got["reason"] == ("no setting reaches 60% exact by step 400; its best within the cap, 55% at step 400, "
                             "is the highest of 4 settings")
    late = curve([5, 10, 20, 30, 40, 45, 46, 46])  # 46% first at step 350, early's at step 150
    got = pick(rows(plan, "mlp", [RISING, late, early, curve([0] * 8)]), plan, "mlp")
    assert got["setting"] == "lr=0.001" and "tied on best share with lr=0.0003 and reached sooner (step 150 " \
                                             "against 350)" in got["reason"]


def test_points_past_the_cap_do_not_count(plan):
    late = curve([10, 20, 30, 40, 50, 55, 58, 59, 90])  # reaches 90 at step 450, past the cap (400)
    got = pick(rows(plan, "mlp", [RISING, late, curve([0] * 8), curve([0] * 8)]), plan, "mlp")
    assert got["setting"] == "lr=0.0003" and got["best"] == 59.0 and got["steps_to_threshold"] is None


def test_at_edge_names_the_key_when_the_best_is_the_grid_s_end(plan):
    at_end = pick(rows(plan, "mlp", [RISING, RISING, RISING, PLATEAU]), plan, "mlp")
    assert at_end["at_edge"] and at_end["edges"] == [{"key": "train.lr", "value": 0.003, "side": "largest"}]
    assert at_end["edge"].startswith("train.lr = 0.003 is the largest value the grid tried")
    assert at_end["reason"] == "reaches 60% exact at step 150, the only one of 4 settings that reaches it"
    inside = pick(rows(plan, "mlp", [RISING, PLATEAU, RISING, RISING]), plan, "mlp")
    assert inside["setting"] == "lr=0.0003" and not inside["at_edge"] and inside["edge"] == ""
    # cross-attention: train.lr is one value (not swept); gate_init 0.0 is the smallest of the two
    ca = pick(rows(plan, "cross_attention", [RISING, PLATEAU]), plan, "cross_attention")
    assert ca["edges"] == [{"key": "connector.cross_attention.gate_init", "value": 0.0, "side": "smallest"}]


def test_pick_refuses_another_rule_another_plan_and_an_unfinished_grid(plan):
    four = [RISING, PLATEAU, RISING, RISING]
    with pytest.raises(FrozenbridgeError, match="picking by rule 'best_at_cap' is refused; the plan declares"):
        pick(rows(plan, "mlp", four), plan, "mlp", rule="best_at_cap")
    assert pick(rows(plan, "mlp", four), plan, "mlp", rule="fewest_steps_then_best_at_cap")["setting"] == "lr=0.0003"
    with pytest.raises(FrozenbridgeError, match="was made under plan 0123456789ab, not this one"):
        pick(rows(plan, "mlp", four, plan="0123456789ab"), plan, "mlp")
    assert pick(rows(plan, "mlp", four, plan=plan_digest(plan)), plan, "mlp")["plan"] == plan_digest(plan)
    with pytest.raises(FrozenbridgeError, match="mlp has no row yet for lr=0.003; the rule picks over the whole grid"):
        pick(rows(plan, "mlp", four)[:3], plan, "mlp")
    stray = rows(plan, "mlp", four) + [{"setting": "lr=0.1", "curve": PLATEAU}]
    with pytest.raises(FrozenbridgeError, match="'lr=0.1': not a setting of the plan's grid for mlp"):
        pick(stray, plan, "mlp")


# the regime views: five replicates a side, the fewest the paired rule decides on

def five(shares, spread=1.0):
    """Five replicates of one made-up curve, replicate r's shares shifted by r * spread (kept within [0, 100])."""
    return [curve([min(100.0, max(0.0, s + r * spread)) for s in shares]) for r in range(5)]


MLP = five([20, 40, 60, 70, 71, 71, 70, 71])  # reaches 60 at step 150, flat near 71
STRONG = five([40, 65, 80, 85, 86, 86, 86, 86])  # ahead everywhere, reaches 60 at step 100
WEAK = five([10, 20, 30, 40, 45, 45, 45, 45])  # behind everywhere, flat, never reaches 60
CLIMBER = five([5, 10, 15, 20, 25, 30, 35, 40])  # behind at the cap, never reaches 60, still rising


def test_each_view_holds_for_a_design_ahead_and_does_not_for_one_behind(plan):
    for verdict in views(STRONG, MLP, plan, 200, "cross_attention").values():
        assert verdict.verdict == HOLDS, verdict.text
    for verdict in views(WEAK, MLP, plan, 200, "cross_attention").values():
        assert verdict.verdict == FAILS, verdict.text
    assert equal_steps(STRONG, MLP, 200, plan, "ca").reason.startswith("ca − MLP, exact points at step 200: +15, +15")
    assert "MLP − ca, steps to 60% exact (one short of it by step 400 counts 450): +50" in \
        steps_to_threshold(STRONG, MLP, plan, "ca").reason


def test_a_design_still_rising_at_the_cap_is_inconclusive_never_behind(plan):
    assert equal_steps(CLIMBER, MLP, 200, plan).verdict == FAILS  # at a fixed budget it is behind
    for view in (steps_to_threshold, best_within_cap):
        verdict = view(CLIMBER, MLP, plan)
        assert verdict.verdict == OPEN, verdict.text
        assert verdict.text.startswith("inconclusive: still learning at step 400 (replicates 0, 1, 2, 3, 4 of 5")
        assert "otherwise does not hold" in verdict.reason
    # flat at the same shares, the same curves do not hold
    assert best_within_cap(WEAK, MLP, plan).verdict == FAILS


def test_a_rising_design_that_reached_the_mlp_is_not_called_behind(plan):
    level = five([10, 25, 40, 52, 60, 64, 68, 71])  # still rising, at the MLP's best (71) at the cap
    verdict = best_within_cap(level, MLP, plan)
    assert verdict.verdict != FAILS and verdict.reason.startswith("still learning at step 400")
    above = five([10, 25, 40, 60, 70, 75, 80, 85])  # still rising and already ahead: holds
    assert best_within_cap(above, MLP, plan).verdict == HOLDS
    assert steps_to_threshold(level, MLP, plan).verdict == FAILS  # it reached 60 later than the MLP: that is known


def test_an_mlp_still_rising_makes_a_lead_within_the_cap_inconclusive(plan):
    verdict = best_within_cap(STRONG, CLIMBER, plan)
    assert verdict.text.startswith("inconclusive: the MLP still learning at step 400")
    assert steps_to_threshold(STRONG, CLIMBER, plan).verdict == HOLDS  # it reached 60; the MLP had not by the cap


def test_replicates_that_never_reach_the_threshold_tie_rather_than_lose(plan):
    verdict = steps_to_threshold(WEAK, five([10, 20, 30, 40, 50, 50, 50, 50]), plan)
    assert verdict.verdict == OPEN and "+0, +0, +0, +0, +0" in verdict.reason and "includes zero" in verdict.reason


def test_the_views_refuse_what_they_cannot_read(plan):
    with pytest.raises(FrozenbridgeError, match="5 replicate curves and the MLP 4"):
        best_within_cap(STRONG, MLP[:4], plan)
    with pytest.raises(FrozenbridgeError, match="outside the sweep's"):
        equal_steps(STRONG, MLP, 450, plan)
    cut = [c[:4] for c in CLIMBER]  # stopped at step 200, still rising
    with pytest.raises(FrozenbridgeError, match="replicate 0 stopped at step 200, before step 300, still rising"):
        equal_steps(cut, MLP, 300, plan)
    stopped_flat = [c[:7] for c in MLP]  # stopped flat at step 350: keeps its last share
    assert equal_steps(STRONG, stopped_flat, 400, plan).verdict == HOLDS
    assert equal_steps(STRONG[:3], MLP[:3], 200, plan).verdict == OPEN  # three replicates cannot reach 90%
