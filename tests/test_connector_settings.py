"""The own-best view's settings (comparison/settings.py): each design at the sweep's pick, stage 1 up to the
sweep's cap, what waits and why; and how the comparison runs them (the MLP first, every design paired with it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from frozenbridge.comparison import run as connectors
from frozenbridge.comparison.settings import OWN_BEST, own_best
from frozenbridge.comparison.run import command, compare
from test_connectors_tool import recording_replicate

PLAN = """threshold: 60
every: 50
cap: 1200
flat: {checks: 6, gain: 2.0, after: 600}
rule: fewest_steps_then_best_at_cap
extend: 0
grids:
  mlp: [{train.lr: 1.0e-4}, {train.lr: 3.0e-4}]
  cross_attention: [{train.lr: 1.0e-3, connector.cross_attention.gate_init: 0.5}]
"""


def _picks(tmp_path, cross_attention_steps):
    (tmp_path / "plan.yaml").write_text(PLAN)
    picks = {"mlp": {"setting": "lr=0.0003", "values": {"train.lr": 0.0003}, "steps_to_threshold": 200},
             "cross_attention": {"setting": "gate_init=0.5,lr=0.001", "steps_to_threshold": cross_attention_steps,
                                 "values": {"connector.cross_attention.gate_init": 0.5, "train.lr": 0.001}}}
    (tmp_path / "picked.json").write_text(json.dumps({"picked": picks}))
    return own_best(tmp_path / "picked.json", tmp_path / "plan.yaml")


def test_each_design_runs_at_its_pick_up_to_the_sweeps_cap_and_a_design_not_picked_waits(tmp_path):
    ready, waiting = _picks(tmp_path, None)
    assert ready["mlp"] == {"connector.design": "mlp", "train.lr": 0.0003, "train.stage1_until.max_steps": 1200}
    assert ready["cross_attention-4"] == {"connector.design": "cross_attention", "connector.cross_attention.every": 4,
                                          "connector.cross_attention.gate_init": 0.5, "train.lr": 0.001,
                                          "train.stage1_until.max_steps": 1200}
    assert set(ready) | set(waiting) == set(OWN_BEST) and not set(ready) & set(waiting)
    assert "waits for the sweep's pick of resampler" in waiting["resampler-16"]
    assert "waits for the sweep's pick of codebook" in waiting["codebook-1024"]
    # cross-attention at its best never captions 60% in the sweep: fewer blocks are not compared
    assert waiting["cross_attention-6"] == ("not compared: cross_attention at its best (gate_init=0.5,lr=0.001) "
                                            "never reaches 60% exact within the sweep's 1200 steps")
    assert command(ready["mlp"])[3:9] == ["-S", "shapes.connector.design=mlp", "-S", "shapes.train.lr=0.0003",
                                          "-S", "shapes.train.stage1_until.max_steps=1200"]


def test_fewer_cross_attention_blocks_are_compared_once_cross_attention_learns(tmp_path):
    ready, waiting = _picks(tmp_path, 900)
    assert ready["cross_attention-6"]["connector.cross_attention.every"] == 6
    assert ready["cross_attention-6"]["connector.cross_attention.gate_init"] == 0.5
    assert "cross_attention-6" not in waiting


def test_a_value_is_spelled_as_yaml_reads_it():
    assert command({"connector.cross_attention.gate_lr": None, "connector.cross_attention.feed_forward": True,
                    "train.lr": 1e-05})[3:9] == ["-S", "shapes.connector.cross_attention.gate_lr=null", "-S",
                                                 "shapes.connector.cross_attention.feed_forward=true", "-S",
                                                 "shapes.train.lr=1e-05"]


def _workspace(tmp_path, monkeypatch):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.lock").write_text("stages: {}\n")
    (tmp_path / "params.yaml").write_text("replicates: [0]\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"], cwd=tmp_path,
                   check=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(connectors, "changed_stages", lambda root: [])


def test_the_own_best_view_trains_its_mlp_first_and_pairs_every_design_with_it(tmp_path, monkeypatch):
    """No default-run MLP is kept or trained for the machine (the view's MLP is its own), even where this machine
    trains unlike the default run."""
    _workspace(tmp_path, monkeypatch)
    monkeypatch.setattr(connectors, "keep_mlp", lambda root, results: pytest.fail("the default run's MLP kept"))
    monkeypatch.setattr(connectors, "precision_mismatch", lambda root: "this machine trains in fp32; ...")
    ran = []
    monkeypatch.setattr(connectors, "run_replicate", recording_replicate(ran))
    ready, _ = _picks(tmp_path, 900)
    compare({name: ready[name] for name in ("cross_attention-4", "mlp")}, tmp_path, tmp_path / "results",
            own_mlp=True)
    assert ran == ["mlp", "cross_attention-4"]
    facts = {name: json.loads((tmp_path / "results" / name / "design.json").read_text()) for name in ran}
    assert facts["cross_attention-4"]["paired_with"] == "mlp" and "paired_with" not in facts["mlp"]


def test_a_setting_that_waits_for_the_sweep_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    _workspace(tmp_path, monkeypatch)
    sweep = tmp_path / "results/connectors/sweep"
    sweep.mkdir(parents=True)
    (sweep / "plan.yaml").write_text(PLAN)
    (sweep / "picked.json").write_text(json.dumps({"picked": {}}))
    monkeypatch.setattr("sys.argv", ["connectors", "--only", "resampler-16"])
    with pytest.raises(SystemExit) as stop:
        connectors.main()
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == ("error: --only resampler-16: waits for the sweep's pick of resampler "
                                              "(`python -m frozenbridge.comparison.sweep --design resampler` runs "
                                              "the rest of its grid, `--pick` writes its picks)")
    monkeypatch.setattr("sys.argv", ["connectors", "--only", "resampler-99"])
    with pytest.raises(SystemExit):
        connectors.main()
    assert "--only resampler-99: not a setting of the own-best view; choose from" in capsys.readouterr().err


def test_the_regime_verdicts_read_a_setting_under_its_own_stage1_cap(tmp_path):
    """An own-best setting's curves ran to the sweep's cap: its verdicts judge them there, not at params.yaml's 600
    steps (where a curve stopped at 1,100 steps would be read past the cap)."""
    from frozenbridge.tools.verdicts.regime_readers import stage1_plan

    (tmp_path / "params.yaml").write_text("shapes:\n  train:\n    stage1_until: {share: 0.6, every: 50, max_steps: 600}\n")
    assert stage1_plan(tmp_path).cap == 600
    assert stage1_plan(tmp_path, {"connector.design": "resampler", "train.lr": 0.001}).cap == 600
    own = stage1_plan(tmp_path, {"connector.design": "resampler", "train.stage1_until.max_steps": 1200})
    assert (own.cap, own.every, own.threshold) == (1200, 50, 60)


def test_the_own_best_findings_say_how_long_each_stage_1_trained_and_where_it_ended(tmp_path):
    from frozenbridge.comparison.report.findings import connectors_findings
    from frozenbridge.comparison.report.tables import OWN_BEST

    cell = lambda rights: {str(r): {"right": v, "gap": 5.0} for r, v in enumerate(rights)}  # noqa: E731
    runs = {"mlp": ([[200, 51.67, 0.2], [250, 70.0, 0.1]], [[200, 63.34, 0.1]]),
            "resampler-49": ([[200, 0.0, 0.9], [1100, 61.66, 0.3]], [[200, 1.67, 0.9], [1200, 55.0, 0.3]])}
    for name, curves in runs.items():
        shapes = tmp_path / OWN_BEST / name / "metrics/shapes"
        shapes.mkdir(parents=True)
        (shapes.parent.parent / "design.json").write_text(json.dumps({"connector_params": 10, "image_tokens": 49}))
        seen = [50, 60] if name == "mlp" else [1.67, 20]  # a design that learns its training pictures, not the pairs
        (shapes / "replicates.json").write_text(json.dumps({"caption": {"seen": {"caption": cell(seen)}}}))
        (shapes / "stage1.json").write_text(json.dumps({str(r): {"curve": c, "steps": c[-1][0]}
                                                        for r, c in enumerate(curves)}))
    text = "\n".join(connectors_findings(tmp_path, OWN_BEST))
    assert ("**mlp**, at its own best: Stage 1 trained 225 steps [200–250] over 2 replicates, its last check at "
            "66.67 [63.34–70]% of the stop rule's training captions exact, against 55 [50–60]% of the seen test pairs' "
            "captions (pictures it never trained on).") in text
    assert ("Stage 1 trained 1150 steps [1100–1200] over 2 replicates, its last check at 58.33 [55–61.66]% of the "
            "stop rule's training captions exact, against 10.84 [1.67–20]% of the seen test pairs' captions (pictures "
            "it never trained on). Its seen test share is under 25% of its training share: it learned its training "
            "pictures, not what they show") in text
    mlp_line = next(line for line in text.splitlines() if line.startswith("**mlp**"))
    assert "learned its training pictures" not in mlp_line  # 55 of 66.67: not below a quarter


def test_the_own_best_view_sets_each_design_beside_the_papers_from_its_paired_replicates(tmp_path):
    """Each gap is computed replicate by replicate against the view's own MLP; whether it lies within the papers'
    few points is read from the medians; the scale sentence names the run's own backbones and sizes."""
    from frozenbridge.comparison.report.findings import connectors_findings
    from frozenbridge.comparison.report.tables import OWN_BEST
    from frozenbridge.comparison.report.literature import FEW_POINTS

    (tmp_path / "params.yaml").write_text("language: {name: smollm2-135m}\nvision: {name: efficientnet-lite0}\n")
    cell = lambda rights: {str(r): {"right": v, "gap": 5.0} for r, v in enumerate(rights)}  # noqa: E731
    scores = {"mlp": ([50, 60], [70, 80], 600), "resampler-49": ([60, 70], [70 - FEW_POINTS / 2, 79], 700)}
    for name, (captions, binding, size) in scores.items():
        shapes = tmp_path / OWN_BEST / name / "metrics/shapes"
        shapes.mkdir(parents=True)
        (shapes.parent.parent / "design.json").write_text(json.dumps({"connector_params": size, "image_tokens": 49}))
        (shapes / "replicates.json").write_text(json.dumps({
            "caption": {"seen": {"caption": cell(captions)}},
            "caption_qa": {"heldout": {"binding": cell(binding)}}}))
        (shapes / "stage1.json").write_text(json.dumps({"0": {"curve": [[200, 61.0, 0.1]], "steps": 200 if
                                                              name == "mlp" else 1100}}))
    text = "\n".join(connectors_findings(tmp_path, OWN_BEST))
    assert ("- **resampler-49** against the MLP, exact-match points (median [lowest, highest] over 2 paired "
            "replicates): seen caption +10 [+10, +10]; held-out binding -1.75 [-2.5, -1]: 1 of 2 medians within the "
            "5 points the papers' connector gaps span. The papers: Idefics2 (§3.3)") in text
    assert ("What differs at this scale: the language model is smollm2-135m and the encoder efficientnet-lite0, both "
            "frozen, with 600–700 parameters trained; the pictures are generated shapes, and the score is exact match "
            "on captions and short answers, after 200–1,100 steps of stage 1.") in text
    assert "Against the papers" not in "\n".join(connectors_findings(tmp_path))  # the equal-settings view: none


def test_the_benchmark_step_beside_minutes_is_before_after_for_one_replicate_and_the_range_for_more():
    from frozenbridge.comparison.report.tables import _steps

    assert _steps({"benchmark_step_seconds": [0.99, 0.95]}, " (", ")") == " (0.99–0.95 s)"
    assert _steps({"benchmark_step_seconds": [1.18, 1.85, 0.92, 1.55]}, " (", ")") == " (0.92–1.85 s)"
    assert _steps({"benchmark_step_seconds": None}, " (", ")") == ""


def test_stages_dvc_restores_from_its_run_cache_are_named_and_the_output_passed_on(tmp_path, capsys):
    from frozenbridge.comparison.workspace import run_experiment

    lines = ["Stage 'shapes_encode' didn't change, skipping", "Stage 'shapes_stage1@4' is cached - skipping run, "
             "checking out outputs", "Running stage 'shapes_summarize':", "Stage 'shapes_text' is cached - skipping "
             "run, checking out outputs"]
    script = "; ".join(f"print({line!r})" for line in lines)
    assert run_experiment([sys.executable, "-c", script], tmp_path) == ["shapes_stage1@4", "shapes_text"]
    assert capsys.readouterr().out.splitlines() == lines
    with pytest.raises(subprocess.CalledProcessError):
        run_experiment([sys.executable, "-c", "raise SystemExit(3)"], tmp_path)


def test_a_replicate_restored_from_the_run_cache_is_kept_untimed_and_the_page_says_so(tmp_path):
    from frozenbridge.comparison.report.tables import _untimed
    from frozenbridge.comparison.replicates import merge_setting, replicate_folder

    values, folder = {"connector.design": "resampler"}, tmp_path / "resampler-16"
    for r, minutes in ((0, 12.5), (1, None), (2, 10.0)):
        (replicate_folder(folder, r) / "metrics/shapes").mkdir(parents=True)
        cell = {str(r): {"right": 1.0, "gap": 1.0}}
        (replicate_folder(folder, r) / "metrics/shapes/replicates.json").write_text(
            json.dumps({"caption": {"seen": {"caption": cell}}}))
        (replicate_folder(folder, r) / "design.json").write_text(json.dumps({
            "connector_params": 7, "image_tokens": 16, "setting": values, "pipeline": "p", "replicate": r,
            "minutes": minutes}))
    facts = json.loads((merge_setting(folder, "p", values) / "design.json").read_text())
    assert (facts["minutes"], facts["untimed"]) == (22.5, [1])
    assert _untimed(facts) == " without replicate 1, restored from DVC's run cache"
    assert _untimed({**facts, "untimed": [1, 2]}) == " without replicates 1, 2, restored from DVC's run cache"
    assert _untimed({"minutes": 3.0}) == ""
    for r in (0, 2):  # none timed: no minutes at all, never 0
        design = replicate_folder(folder, r) / "design.json"
        design.write_text(json.dumps({**json.loads(design.read_text()), "minutes": None}))
    facts = json.loads((merge_setting(folder, "p", values) / "design.json").read_text())
    assert (facts["minutes"], facts["untimed"]) == (None, [0, 1, 2])
