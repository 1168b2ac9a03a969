"""A pick at the edge of its grid is followed past it (comparison/sweep/extend.py): the step is fixed by the grid's
own spacing, the sweep runs the added settings after the declared ones, picks again over the grown grid, stops after
the plan's `extend` rounds or once the pick is inside, and says so."""

from __future__ import annotations

import json

import pytest

from frozenbridge.comparison.sweep.extend import extended_grid, past_edges, step_past
from frozenbridge.comparison.sweep.plan import load_plan, plan_digest
from frozenbridge.comparison.sweep.sweep import grid, picks, run_sweep, todo

PLAN = """threshold: 60
every: 50
cap: 200
flat: {checks: 4, gain: 2.0, after: 0}
rule: fewest_steps_then_best_at_cap
extend: %d
grids:
  mlp: [{train.lr: 1.0e-4}, {train.lr: 3.0e-4}, {train.lr: 1.0e-3}, {train.lr: 3.0e-3}]
  cross_attention: [{train.lr: 1.0e-3, connector.cross_attention.gate_init: 0.0},
                    {train.lr: 1.0e-3, connector.cross_attention.gate_init: 0.5}]
"""


@pytest.mark.parametrize("edge, neighbour, after", [
    (3e-3, 1e-3, 9e-3),  # a ratio of 3: the next is 3 times on
    (1e-4, 3e-4, 3.33e-5),  # below the smallest, 3 significant digits
    (0.5, 0.0, 1.0),  # from 0: a difference
    (1.0, 0.5, 2.0),  # a ratio of exactly 2 counts as a ratio
    (0.6, 0.5, 0.7),  # close values: a difference
    (256, 1024, 64),  # integers stay integers
    (8, 4, 16),
    (0.0, 0.5, None),  # never from 0 to the other side
    (0.2, 0.5, 0.08),  # below the smallest by a ratio: never reaches 0
    (-0.5, 0.0, -1.0),
])
def test_the_step_past_an_edge_follows_the_grids_own_spacing(edge, neighbour, after):
    got = step_past(edge, neighbour)
    assert got == after and type(got) is type(after)


def curve(shares):
    return [[50 * (i + 1), float(s), 1.0 / (i + 1)] for i, s in enumerate(shares)]


# made-up curves by setting name: the largest learning rate is the best of the declared grid, 9e-3 beats it, 2.7e-2
# does not; cross-attention's open gate start is the best and 1.0 beats it
CURVES = {
    "mlp": {"lr=0.0001": [0, 5, 10, 15], "lr=0.0003": [5, 20, 40, 50], "lr=0.001": [10, 40, 61, 70],
            "lr=0.003": [20, 61, 70, 70], "lr=0.009": [61, 70, 80, 80], "lr=0.027": [0, 0, 0, 0]},
    "cross_attention": {"gate_init=0.0,lr=0.001": [0, 0, 0, 0], "gate_init=0.5,lr=0.001": [0, 10, 61, 70],
                        "gate_init=1.0,lr=0.001": [0, 61, 70, 70], "gate_init=2.0,lr=0.001": [0, 20, 40, 61]},
}


def fake_train(plan, calls):
    def train(design, setting):
        calls.append((design, setting.name))
        return {"design": design, "setting": setting.name, "values": setting.as_dict(), "plan": plan_digest(plan),
                "curve": curve(CURVES[design][setting.name]), "stopped": "cap", "steps": 200, "machine": {},
                "precision": "fp32"}
    return train


def _plan(tmp_path, rounds):
    (tmp_path / "plan.yaml").write_text(PLAN % rounds)
    return load_plan(tmp_path / "plan.yaml")


def test_the_sweep_runs_past_an_edge_until_the_pick_is_inside(tmp_path):
    plan, out, calls = _plan(tmp_path, 2), tmp_path / "sweep", []
    run_sweep(plan, plan.designs, out, fake_train(plan, calls))
    assert calls == [("mlp", "lr=0.0001"), ("mlp", "lr=0.0003"), ("mlp", "lr=0.001"), ("mlp", "lr=0.003"),
                     ("mlp", "lr=0.009"), ("mlp", "lr=0.027"),  # 9e-3 wins, so one more round; then it is inside
                     ("cross_attention", "gate_init=0.0,lr=0.001"), ("cross_attention", "gate_init=0.5,lr=0.001"),
                     ("cross_attention", "gate_init=1.0,lr=0.001"), ("cross_attention", "gate_init=2.0,lr=0.001")]
    assert todo(out, plan, plan.designs) == []
    got = picks(plan, out)["picked"]
    assert got["mlp"]["setting"] == "lr=0.009" and got["mlp"]["extended"] == ["lr=0.009", "lr=0.027"]
    assert not got["mlp"]["at_edge"] and got["mlp"]["reason"].endswith("the fewest of the 3 of 6 settings that "
                                                                       "reach it")
    # gate_init 1.0 wins, and the second round's 2.0 does not: 1.0 is inside [0, 2]
    assert got["cross_attention"]["setting"] == "gate_init=1.0,lr=0.001" and not got["cross_attention"]["at_edge"]


def test_the_rounds_stop_at_the_plans_extend_and_the_pick_says_it_may_lie_further(tmp_path):
    plan, out, calls = _plan(tmp_path, 1), tmp_path / "sweep", []
    run_sweep(plan, ("cross_attention",), out, fake_train(plan, calls))
    assert [name for _, name in calls][-1] == "gate_init=1.0,lr=0.001" and len(calls) == 3
    got = picks(plan, out)["picked"]["cross_attention"]
    assert got["setting"] == "gate_init=1.0,lr=0.001" and got["at_edge"]
    assert got["edge"] == ("connector.cross_attention.gate_init = 1.0 is the largest value the grid tried: the best "
                           "may lie past it (its grid grew by 1 setting past its edges, in 1 round at most)")
    none = _plan(tmp_path, 0)
    assert [s.name for s in grid(none, out, "cross_attention")] == ["gate_init=0.0,lr=0.001", "gate_init=0.5,lr=0.001"]
    assert picks(none, out)["picked"]["cross_attention"]["edge"].endswith(
        "(the plan's extend is 0: its grid does not grow past an edge)")


def test_a_grid_grows_only_once_every_setting_before_has_a_row(tmp_path):
    plan, rows = _plan(tmp_path, 2), {}
    settings = extended_grid(plan, "mlp", lambda s: rows.get(s.name))
    assert len(settings) == 4  # no rows: nothing to pick, nothing added
    for s in settings[:3]:
        rows[s.name] = fake_train(plan, [])("mlp", s)
    assert len(extended_grid(plan, "mlp", lambda s: rows.get(s.name))) == 4  # one row missing still
    rows["lr=0.003"] = fake_train(plan, [])("mlp", settings[3])
    grown = extended_grid(plan, "mlp", lambda s: rows.get(s.name))
    assert [s.name for s in grown[4:]] == ["lr=0.009"] and grown[4].as_dict() == {"train.lr": 0.009}


def test_an_added_setting_keeps_the_picks_other_values_and_the_grids_names(tmp_path):
    plan = _plan(tmp_path, 2)
    settings = plan.grid("cross_attention")
    chosen = {"values": settings[1].as_dict(),
              "edges": [{"key": "connector.cross_attention.gate_init", "value": 0.5, "side": "largest"}]}
    (added,) = past_edges(chosen, settings)
    assert added.as_dict() == {"connector.cross_attention.gate_init": 1.0, "train.lr": 1e-3}
    assert added.name == "gate_init=1.0,lr=0.001"
    assert past_edges(chosen, settings + (added,)) == []  # already there: not added twice
    at_zero = {"values": settings[0].as_dict(),
               "edges": [{"key": "connector.cross_attention.gate_init", "value": 0.0, "side": "smallest"}]}
    assert past_edges(at_zero, settings) == []  # no step from 0 to -0.5
    assert json.dumps(added.as_dict())  # a row's values stay plain JSON


def test_the_page_marks_the_settings_added_past_an_edge(tmp_path):
    from frozenbridge.comparison.sweep.report import sweep_findings
    from frozenbridge.comparison.sweep.sweep import write_picks

    out = tmp_path / "results/connectors/sweep"
    out.mkdir(parents=True)
    plan = _plan(out, 2)
    run_sweep(plan, plan.designs, out, fake_train(plan, []))
    write_picks(plan, out)
    lines = sweep_findings(tmp_path)
    assert "followed past it up to 2 times" in lines[0] and "10 of 10 settings run." in lines[0]
    marked = [line.split(" | ")[1] for line in lines if "past the grid's edge" in line]
    assert marked == ["lr=0.009 (past the grid's edge) ◀", "lr=0.027 (past the grid's edge)",
                      "gate_init=1.0,lr=0.001 (past the grid's edge) ◀",
                      "gate_init=2.0,lr=0.001 (past the grid's edge)"]

