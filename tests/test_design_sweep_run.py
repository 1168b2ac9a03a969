"""The design sweep on tiny models: each run's row kept as it ends (curve, what the design does inside, machine and
precision), a sweep stopped mid-way goes on at the next missing setting, the pick follows the plan's rule and no
other, and the figure is drawn."""

from __future__ import annotations

import json

import pytest
import torch

from frozenbridge.core.backbones.language import load_language
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.plan import load_plan, plan_digest
from frozenbridge.comparison.sweep.sweep import FIGURE, PICKED, run_sweep, todo, write_picks
from frozenbridge.comparison.sweep.train import Inputs, run_setting

PLAN = """threshold: 60
every: 2
cap: 4
flat: {checks: 4, gain: 2.0, after: 0}
rule: fewest_steps_then_best_at_cap
extend: 0
grids:
  mlp: [{train.lr: 0.001}, {train.lr: 0.01}]
  cross_attention: [{connector.cross_attention.every: 1, connector.cross_attention.gate_init: 0.5}]
"""
RAW = {"shapes": {"train": {"batch_size": 4, "stage1_steps": 2, "stage1_until": {"items": 3}, "compile": False},
                  "evaluate": {"batch_size": 8, "caption_tokens": 6}}}


@pytest.fixture()
def sweep(tmp_path, tiny_models):
    from test_train import tiny_split

    (tmp_path / "plan.yaml").write_text(PLAN)
    plan = load_plan(tmp_path / "plan.yaml")
    shared = Inputs(tiny_split(), load_language(str(tiny_models["qwen2"])), torch.device("cpu"), False,
                    {"device": "test CPU"})
    return plan, tmp_path / "sweep", shared


def test_a_sweep_keeps_each_run_goes_on_after_a_stop_and_picks_by_the_plans_rule(sweep):
    plan, out, shared = sweep
    calls = []

    def train(design, setting):
        calls.append((design, setting.name))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the sitting ends during the second run
        return run_setting(RAW, design, setting, plan, shared)

    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, plan.designs, out, train)
    assert [p.relative_to(out).as_posix() for p in out.rglob("*.json")] == ["mlp/lr=0.001.json"]
    assert [(d, s.name) for d, s in todo(out, plan, plan.designs)] == [
        ("mlp", "lr=0.01"), ("cross_attention", "every=1,gate_init=0.5")]
    written = run_sweep(plan, plan.designs, out, train)
    assert calls == [("mlp", "lr=0.001"), ("mlp", "lr=0.01"), ("mlp", "lr=0.01"),
                     ("cross_attention", "every=1,gate_init=0.5")]  # the kept run is not trained again
    assert len(written) == 2 and todo(out, plan, plan.designs) == []

    row = json.loads((out / "cross_attention/every=1,gate_init=0.5.json").read_text())
    assert [p[0] for p in row["curve"]] == [2, 4] and row["stopped"] == "cap" and row["plan"] == plan_digest(plan)
    assert row["values"] == {"connector.cross_attention.every": 1, "connector.cross_attention.gate_init": 0.5}
    assert [e["step"] for e in row["inside"]] == [0, 2, 4]
    assert len(row["load_average"]) == len(row["curve"]) and row["threads"] == torch.get_num_threads()
    assert row["inside"][0]["gates"][0] == round(float(torch.tanh(torch.tensor(0.5))), 4)
    assert (row["precision"], row["device"], row["machine"]) == ("fp32", "cpu", {"device": "test CPU"})
    mlp = json.loads((out / "mlp/lr=0.001.json").read_text())
    assert mlp["inside"] == [] and mlp["connector_params"] > 0

    with pytest.raises(FrozenbridgeError, match="picking by rule 'best_final_share' is refused"):
        write_picks(plan, out, rule="best_final_share")
    assert not (out / PICKED).exists()
    picked = write_picks(plan, out)
    assert set(picked["picked"]) == {"mlp", "cross_attention"} and picked["runs_missing"] == {}
    assert picked["picked"]["cross_attention"]["setting"] == "every=1,gate_init=0.5"
    assert picked["picked"]["mlp"]["reason"]  # a sentence made of the rows' numbers
    assert json.loads((out / PICKED).read_text()) == picked

    from frozenbridge.comparison.sweep.figure import draw_curves

    assert draw_curves(plan, out, picked, out / FIGURE).stat().st_size > 10_000


def test_the_command_refuses_another_rule_and_a_design_the_plan_does_not_sweep(tmp_path, capsys):
    from frozenbridge.comparison.sweep.__main__ import main

    (tmp_path / "plan.yaml").write_text(PLAN)
    for argv, said in ((["--rule", "best_final_share"], "picking by rule 'best_final_share' is refused"),
                       (["--design", "perceiver"], "no grid for design 'perceiver'")):
        with pytest.raises(SystemExit) as stop:
            main(["--plan", str(tmp_path / "plan.yaml"), "--pick", *argv])
        assert stop.value.code == 2 and said in capsys.readouterr().err
    main(["--plan", str(tmp_path / "plan.yaml"), "--list"])
    assert capsys.readouterr().out.splitlines()[0].split() == ["mlp", "to", "run", "lr=0.001"]


def test_the_sweep_table_gives_each_kept_run_and_the_pick_from_the_rows(tmp_path):
    from frozenbridge.comparison.sweep.report import sweep_findings

    out = tmp_path / "results/connectors/sweep"
    out.mkdir(parents=True)
    (out / "plan.yaml").write_text(PLAN)
    assert "0 of 3 settings run. Nothing is kept yet" in sweep_findings(tmp_path)[0]
    plan = load_plan(out / "plan.yaml")
    machine = {"cpu_model": "AMD EPYC"}
    for setting, shares in zip(plan.grid("mlp"), ([20, 70], [10, 40])):
        (out / "mlp").mkdir(exist_ok=True)
        (out / "mlp" / f"{setting.name}.json").write_text(json.dumps({
            "design": "mlp", "setting": setting.name, "values": setting.as_dict(), "plan": plan_digest(plan),
            "curve": [[2, shares[0], 0.5], [4, shares[1], 0.3]], "stopped": "cap", "steps": 4, "inside": [],
            "machine": machine, "precision": "fp32", **({"connector_params": 1_234_567, "step_seconds": 0.7312}
                                                        if setting.name == "lr=0.001" else
                                                        {"step_seconds": 2.2, "load_average": [3.4, 3.6],
                                                         "threads": 2})}))
    write_picks(plan, out)
    lines = sweep_findings(tmp_path)
    assert "2 of 3 settings run." in lines[0]
    # no budget within the cap
    assert "| mlp | lr=0.001 ◀ | 4 | 70 (4) | cap at 4 (70) | — | 1.23M | 0.73 | AMD EPYC, fp32 |" in lines
    shared = "2.20 (shared: load 3.5 on 2 threads)"  # the machine's load 1.5 above the run's own 2 threads
    assert f"| mlp | lr=0.01 | never | 40 (4) | cap at 4 (40) | — | — | {shared} | AMD EPYC, fp32 |" in lines
    # equal steps: each curve at the default run's stage-1 budget (params.yaml), its fewest and its most steps
    (tmp_path / "params.yaml").write_text("shapes:\n  train:\n    stage1_steps: 2\n    stage1_until: {share: 0.6, "
                                          "max_steps: 4}\n")
    lines = sweep_findings(tmp_path)
    assert "the exact share at the default run's stage-1 budget (step 2 and step 4: equal steps)" in lines[0]
    assert "| design | setting | % at step 2 | % at step 4 | steps to 60% |" in lines[2]
    assert "| mlp | lr=0.001 ◀ | 20 | 70 | 4 | 70 (4) | cap at 4 (70) | — | 1.23M | 0.73 | AMD EPYC, fp32 |" \
        in lines
    assert f"| mlp | lr=0.01 | 10 | 40 | never | 40 (4) | cap at 4 (40) | — | — | {shared} | AMD EPYC, fp32 |" \
        in lines
    assert any(line.startswith("- mlp: lr=0.001 ◀, reaches 60% exact at step 4") for line in lines)


def test_a_runs_step_time_is_marked_only_where_other_work_shared_the_machine():
    from frozenbridge.comparison.sweep.report import _seconds

    alone = {"step_seconds": 0.7312, "load_average": [2.1, 2.4, 2.5], "threads": 2}
    assert _seconds(alone) == "0.73"  # 2.33 on 2 threads: within the 0.5 allowed for the run's own load
    assert _seconds({**alone, "load_average": [2.6, 2.6]}) == "0.73 (shared: load 2.6 on 2 threads)"
    assert _seconds({"step_seconds": 0.7312}) == "0.73" and _seconds({}) == "—"  # rows made before loads were kept


def test_a_designs_paragraph_says_what_it_did_inside_at_its_first_and_last_look():
    from frozenbridge.comparison.report.sentences import inside_sentence

    assert inside_sentence({}) == ""
    gates = {"inside": [{"step": 0, "gates": [0.0, 0.0]}, {"step": 600, "gates": [0.12, 0.5]}]}
    assert inside_sentence(gates) == (" Inside (its first replicate's stage 1): at step 0 gates' tanh 0, 0; at step "
                                      "600 gates' tanh 0.12, 0.5.")
    queries = {"inside": [{"step": 0, "query_entropy": [1.0, 0.9, 0.5], "on_patches": 0.8}]}
    assert "queries' attention spread 0.90 (median; 0.50–1.00), 80% of it on the patches" in inside_sentence(queries)


def test_a_pick_names_the_machine_of_its_own_row_and_every_machine_of_the_grid(tmp_path):
    """Sittings on other machines may add rows to one grid: the pick keeps the chosen row's machine and lists them
    all, so the page never calls a mixed grid one machine's."""
    from frozenbridge.comparison.sweep.report import sweep_findings

    out = tmp_path / "results/connectors/sweep"
    out.mkdir(parents=True)
    (out / "plan.yaml").write_text(PLAN)
    plan = load_plan(out / "plan.yaml")
    for setting, share, cpu in zip(plan.grid("mlp"), (40, 70), ("AMD EPYC", "Intel(R) Xeon(R) Processor")):
        (out / "mlp").mkdir(parents=True, exist_ok=True)
        (out / "mlp" / f"{setting.name}.json").write_text(json.dumps({
            "design": "mlp", "setting": setting.name, "values": setting.as_dict(), "plan": plan_digest(plan),
            "curve": [[2, share, 0.5], [4, share, 0.3]], "stopped": "cap", "steps": 4, "machine": {"cpu_model": cpu},
            "precision": "bf16 weights + autocast", "device": "cpu"}))
    chosen = write_picks(plan, out)["picked"]["mlp"]
    assert chosen["setting"] == "lr=0.01"  # 70% at step 2: the second row, made on the Intel machine
    assert chosen["machine"] == {"cpu_model": "Intel(R) Xeon(R) Processor"}
    assert chosen["machines"] == ["AMD EPYC", "Intel(R) Xeon(R) Processor"]
    line = next(x for x in sweep_findings(tmp_path) if x.startswith("- mlp: "))
    assert line.endswith("Its grid ran on 2 machines (AMD EPYC, Intel(R) Xeon(R) Processor; the pick's own row on "
                         "Intel(R) Xeon(R) Processor): its curves differ by each machine's rounding as well as by "
                         "setting.")
