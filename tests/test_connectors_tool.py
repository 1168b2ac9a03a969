"""The connector comparison's command (comparison/run.py): what each setting runs, what counts as kept, and the
workspace around its experiments (comparison/workspace.py): when it refuses to start, and how it is put back."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.designs import design_names
from frozenbridge.comparison import run as connectors
from frozenbridge.comparison.settings import EQUAL_SETTINGS as SETTINGS
from frozenbridge.comparison.run import command, compare, kept, pipeline, run_setting, same_inputs
from frozenbridge.comparison.workspace import Terminated, changed_stages, precision_mismatch


def test_every_setting_is_one_experiment_of_stage1_and_caption_qa_with_its_design():
    assert {values["connector.design"] for values in SETTINGS.values()} == set(design_names()) - {"mlp"}  # mlp: the default run's
    assert command(SETTINGS["resampler-16"]) == [
        "dvc", "exp", "run", "-S", "shapes.connector.design=resampler", "-S", "shapes.connector.resampler.latents=16",
        "-S", "shapes.recipes=[caption,caption_qa]", "shapes_summarize", "shapes_probe", "shapes_text"]


def recording_replicate(ran: list):
    """A stand-in for run_replicate: records the setting's name and keeps an empty replicate for it."""
    def fake(name, values, replicate, first, root, results, extra=(), step=True):
        ran.append(name)
        folder = connectors.replicate_folder(results / name, replicate)
        (folder / "metrics/shapes").mkdir(parents=True)
        (folder / "metrics/shapes/replicates.json").write_text("{}")
        (folder / "design.json").write_text(json.dumps({"connector_params": 1, "image_tokens": 1, "setting": values,
                                                        "pipeline": connectors.pipeline(root), "minutes": 1.0}))
        return folder
    return fake


def _commit(root, **files: str) -> None:
    for name, text in files.items():
        (root / name.replace("_", ".")).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"], cwd=root,
                   check=True)


def test_a_setting_is_kept_for_the_pipeline_and_values_it_ran_with(tmp_path):
    """Commits that leave the shapes study's lock entries and params alone (docs, results, another study) keep a
    setting; a new shapes entry in the lock, or a new shared param, does not."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {shapes_data: {cmd: a}, onetoken_train: {cmd: b}}\n",
            params_yaml="seed: 0\nonetoken: {steps: 200}\n")
    key, values = pipeline(tmp_path), SETTINGS["resampler-16"]
    for r in (0, 1):
        (tmp_path / f"kept/replicates/{r}").mkdir(parents=True)
        (tmp_path / f"kept/replicates/{r}/design.json").write_text(json.dumps({"pipeline": key, "setting": values}))
    _commit(tmp_path, README_md="results\n")
    assert pipeline(tmp_path) == key and kept(tmp_path / "kept", key, values, [0, 1])
    assert not kept(tmp_path / "kept", key, values, [0, 1, 2])  # a replicate not yet run
    assert not kept(tmp_path / "kept", key, SETTINGS["resampler-49"], [0, 1])
    assert not kept(tmp_path / "none", key, values, [0])
    _commit(tmp_path, dvc_lock="stages: {shapes_data: {cmd: a}, onetoken_train: {cmd: c}}\n",
            params_yaml="seed: 0\nonetoken: {steps: 300}\n")
    assert pipeline(tmp_path) == key  # only the one-token study changed: its stage and its params
    _commit(tmp_path, dvc_lock="stages: {shapes_data: {cmd: d}, onetoken_train: {cmd: c}}\n")
    assert pipeline(tmp_path) != key and not kept(tmp_path / "kept", pipeline(tmp_path), values, [0, 1])
    moved = pipeline(tmp_path)
    _commit(tmp_path, params_yaml="seed: 1\nonetoken: {steps: 300}\n")
    assert pipeline(tmp_path) != moved  # a param every study shares


def test_it_refuses_a_workspace_with_uncommitted_changes(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="", params_yaml="seed: 0\n")
    (tmp_path / "params.yaml").write_text("seed: 1\n")
    with pytest.raises(FrozenbridgeError, match="uncommitted changes"):
        compare(SETTINGS, tmp_path, tmp_path / "results")


def test_outputs_missing_from_a_fresh_clone_are_no_change_but_new_params_or_code_are(tmp_path):
    """A clone with no DVC cache (outputs "not in cache", downstream deps "deleted", or "modified" once `dvc checkout
    --allow-missing` has left the empty folders above them) may run the comparison; a changed param or edited script
    may not, since the MLP's committed metrics would no longer be the code's."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["dvc", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, params_yaml="n: 1\n", make_sh="mkdir -p made/a && cat params.yaml > made/a/n.txt\n", dvc_yaml=(
        "stages:\n  a: {cmd: sh make.sh, deps: [make.sh], params: [n], outs: [made/a]}\n"
        "  b: {cmd: ls made > b.txt, deps: [made], outs: [b.txt]}\n"))
    subprocess.run(["dvc", "repro", "-q"], cwd=tmp_path, check=True)
    assert changed_stages(tmp_path) == []
    for made in ("made", "b.txt", ".dvc/cache"):
        subprocess.run(["rm", "-rf", str(tmp_path / made)], check=True)
    assert changed_stages(tmp_path) == []
    subprocess.run(["dvc", "checkout", "-q", "-f", "--allow-missing"], cwd=tmp_path, check=True)
    assert (tmp_path / "made").is_dir() and changed_stages(tmp_path) == []  # an empty folder is still no output
    (tmp_path / "params.yaml").write_text("n: 2\n")
    assert changed_stages(tmp_path) == ["a"]
    (tmp_path / "params.yaml").write_text("n: 1\n")
    (tmp_path / "make.sh").write_text("echo other > made/a/n.txt\n")
    assert changed_stages(tmp_path) == ["a"]


@pytest.mark.parametrize("precision, here_bf16, differs", [
    ("auto", False, "train in fp32"), ("auto", True, None), ("bf16", False, None), ("fp32", True, None)])
def test_a_machine_unlike_the_default_runs_pairs_its_designs_with_its_own_mlp(tmp_path, monkeypatch, capsys,
                                                                               precision, here_bf16, differs):
    """The default run (bench/repro.json) ran on a CPU with AMX: a CPU without bf16 at precision auto trains in fp32,
    so the tool trains an MLP here first (mlp@cpu-fp32) and pairs every design it trains here with it, named in the
    design's design.json; nothing is refused. An explicit precision is the same on both machines: the default run's
    MLP is the partner."""
    monkeypatch.setattr("frozenbridge.core.precision.cpu_has_bf16", lambda: here_bf16)
    (tmp_path / "params.yaml").write_text(f"device: cpu\nreplicates: [0]\nshapes:\n  train:\n    precision: "
                                          f"{precision}\n")
    assert precision_mismatch(tmp_path) is None  # no timed default run: nothing to pair with
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench/repro.json").write_text(json.dumps({"machine": {"device": "cpu", "bf16_path": "AMX"}}))
    found = precision_mismatch(tmp_path)
    assert found is None if differs is None else (differs in found and "ran in bf16" in found)
    if not differs:
        return
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(connectors, "changed_stages", lambda root: [])
    monkeypatch.setattr(connectors, "keep_mlp", lambda root, results: None)
    ran = []
    monkeypatch.setattr(connectors, "run_replicate", recording_replicate(ran))
    compare({"resampler-16": SETTINGS["resampler-16"]}, tmp_path, tmp_path / "results")
    assert ran == ["mlp@cpu-fp32", "resampler-16"]  # the partner first, then the design
    facts = {name: json.loads((tmp_path / "results" / name / "design.json").read_text()) for name in ran}
    assert facts["resampler-16"]["paired_with"] == "mlp@cpu-fp32" and "paired_with" not in facts["mlp@cpu-fp32"]
    from frozenbridge.comparison.report.tables import OWN_BEST, designs, partner

    (tmp_path / "results/connectors").mkdir()
    for name in ran:  # where the tool keeps its runs by default: the own-best view's folder
        (tmp_path / "results" / name).rename(tmp_path / "results/connectors" / name)
    assert partner(designs(tmp_path, OWN_BEST), "resampler-16") == "mlp@cpu-fp32"
    monkeypatch.setattr("sys.argv", ["connectors", "--view", "equal-settings", "--list"])
    connectors.main()  # --list says so before anyone starts a setting
    assert "paired with mlp@cpu-fp32, an MLP this tool trains here first" in capsys.readouterr().out


def test_an_experiment_that_made_other_pictures_or_features_than_the_default_run_is_not_kept(tmp_path):
    """Where the experiment made the data again (a workspace with none) and got other bytes than dvc.lock's, its
    designs are not paired with the MLP's runs: refused; other stages' outputs may differ (they are the design's)."""
    lock = lambda pictures, runs: (f"stages:\n  shapes_data:\n    outs:\n    - path: data/shapes/pictures\n"
                                   f"      md5: {pictures}\n  shapes_encode:\n    outs:\n    - path: f\n      md5: f1\n"
                                   f"  shapes_stage1@0:\n    outs:\n    - path: runs\n      md5: {runs}\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock=lock("p1", "r1"))
    (tmp_path / "dvc.lock").write_text(lock("p1", "r2"))
    same_inputs(tmp_path)  # the design's own runs differ: that is the experiment
    (tmp_path / "dvc.lock").write_text(lock("p2", "r2"))
    with pytest.raises(FrozenbridgeError, match="shapes_data outputs differ from the default run's"):
        same_inputs(tmp_path)


def test_a_stopped_comparison_stops_its_experiment_and_puts_back_the_branch_and_files(tmp_path, monkeypatch):
    """SIGTERM to the tool while the experiment runs (here a stand-in that detaches HEAD and rewrites params.yaml as an
    interrupted `dvc exp run` leaves them, with a child that would write later): the child stops, the branch and files
    come back."""
    subprocess.run(["git", "init", "-q", "-b", "work"], cwd=tmp_path, check=True)
    subprocess.run(["dvc", "init", "-q"], cwd=tmp_path, check=True)
    for folder in ("metrics", "plots"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kept.json").write_text("{}")
    _commit(tmp_path, dvc_lock="", params_yaml="seed: 0\n")
    stand_in = ("git checkout -q --detach; echo 'seed: 9' > params.yaml; (sleep 1; touch late) & "
                "sleep 0.2; kill -TERM $PPID; sleep 30")
    monkeypatch.setattr(connectors, "command", lambda values, extra: ["sh", "-c", stand_in])
    with pytest.raises(Terminated):
        run_setting("resampler-16", SETTINGS["resampler-16"], tmp_path, tmp_path / "results", step=False)
    time.sleep(1.5)
    git = lambda *args: subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert git("symbolic-ref", "--short", "HEAD") == "work" and git("status", "--porcelain") == ""
    assert not (tmp_path / "late").exists() and not (tmp_path / "results").exists()


def _replicates(rights: list[float]) -> dict:
    per = {str(i): {"right": r, "gap": r - 10.0} for i, r in enumerate(rights)}
    return {recipe: {test: {task: per for task in ("caption", "count", "binding", "leftmost")}
                     for test in ("seen", "heldout")} for recipe in ("caption", "caption_qa")}


def test_the_report_table_puts_each_design_beside_the_default_runs_mlp(tmp_path):
    from frozenbridge.comparison.report.tables import connectors_table

    (tmp_path / "metrics/shapes").mkdir(parents=True)
    (tmp_path / "metrics/shapes/replicates.json").write_text(json.dumps(_replicates([50, 40, 60])))
    kept = tmp_path / "results/connectors/equal-settings"
    (kept / "mlp").mkdir(parents=True)
    (kept / "mlp/design.json").write_text(json.dumps({"connector_params": 619200, "image_tokens": 49,
                                                       "minutes": None}))
    assert connectors_table(tmp_path) == []  # the MLP alone compares nothing
    (kept / "resampler-16/metrics/shapes").mkdir(parents=True)
    (kept / "resampler-16/design.json").write_text(json.dumps({"connector_params": 693824, "image_tokens": 16,
                                                                "minutes": 31.6, "benchmark_step_seconds": [1.25, 0.9]}))
    (kept / "resampler-16/metrics/shapes/replicates.json").write_text(json.dumps(_replicates([20, 30])))
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench/designs-cpu-2core.json").write_text(json.dumps({"rows": [
        {"measure": "resampler-16 (693,824 parameters, 16 image tokens): question step", "ratio": 1.35},
        {"measure": "resampler-16 (693,824 parameters, 16 image tokens): question step FLOPs", "a_value": 254.9,
         "ratio": 1.58}]}))
    rows = connectors_table(tmp_path)
    mlp = next(r for r in rows if r.startswith("| mlp |"))
    resampler = next(r for r in rows if r.startswith("| resampler-16 |"))
    # each row says how many replicates its medians are over: a design can trail its MLP by a sitting
    assert "| mlp | 3 | 619,200 | 49 | — | 1.00× | — | seen | 50 [40–60]; gap 40 |" in mlp
    # the step ratio is the design's time over the MLP's (the benchmark's row holds the MLP's over the design's: 1.35)
    assert ("| resampler-16 | 2 | 693,824 | 16 | 255 | 0.74× | 32 (1.25–0.90 s) | seen | 25 [20–30]; gap 15 |"
            in resampler)
    assert rows.index(mlp) < rows.index(resampler)


def test_the_section_9_verdicts_pair_each_design_with_the_mlp_by_replicate(tmp_path):
    from frozenbridge.tools.verdicts.connector_readers import versus
    from frozenbridge.tools.verdicts.readers import Sources
    from frozenbridge.tools.verdicts.rules import HOLDS, OPEN, Ahead, judge

    read = versus("codebook-1024", "mlp", (("seen", "caption"),))
    evidence = read(Sources(tmp_path))
    assert judge(Ahead("second"), evidence)[0] == OPEN and "python -m frozenbridge.comparison" in evidence.missing
    assert evidence.missing.endswith("--only codebook-1024 --view equal-settings")
    (tmp_path / "metrics/shapes").mkdir(parents=True)
    (tmp_path / "metrics/shapes/replicates.json").write_text(json.dumps(_replicates([50, 40, 60, 55, 45])))
    kept = tmp_path / "results/connectors/equal-settings"
    for name, rights in (("mlp", None), ("codebook-1024", [30, 35, 40, 30, 20])):
        (kept / name / "metrics/shapes").mkdir(parents=True)
        (kept / name / "design.json").write_text(json.dumps({"connector_params": 1, "image_tokens": 1}))
        if rights:
            (kept / name / "metrics/shapes/replicates.json").write_text(json.dumps(_replicates(rights)))
    evidence = read(Sources(tmp_path))
    assert evidence.cells[0].paired["differences"] == [-20, -5, -20, -25, -25]
    assert judge(Ahead("second"), evidence)[0] == HOLDS  # behind in all five: the MLP ahead
    assert "seen caption -20, -5, -20, -25, -25" in evidence.ours
    assert "at the MLP's settings (the equal-settings view)" in evidence.ours
    assert evidence.source == "results/connectors/equal-settings/codebook-1024, mlp"
    own_best = versus("codebook-1024", "mlp", (("seen", "caption"),), "results/connectors")(Sources(tmp_path))
    # not read from the view; its MLP is a setting of its own, run with it
    assert own_best.missing == "python -m frozenbridge.comparison --only codebook-1024 mlp"


def test_the_zero_gate_claim_reads_each_cross_attention_settings_text_stage(tmp_path):
    from frozenbridge.tools.verdicts.connector_readers import zero_gate_starts_as_text_model
    from frozenbridge.tools.verdicts.readers import Sources
    from frozenbridge.tools.verdicts.rules import FAILS, HOLDS, AtMost, judge

    assert "--only cross_attention-4" in zero_gate_starts_as_text_model(Sources(tmp_path)).missing
    kept = tmp_path / "results/connectors/equal-settings"
    for name, gap in (("mlp", None), ("cross_attention-4", 0.0), ("cross_attention-6", 0.0)):
        (kept / name / "metrics/shapes").mkdir(parents=True)
        (kept / name / "design.json").write_text(json.dumps({"connector_params": 1, "image_tokens": 0}))
        if gap is not None:
            (kept / name / "metrics/shapes/text.json").write_text(json.dumps(
                {"zero_gate": {"max_abs_logit_difference": gap, "pictures": 8, "design": "cross_attention"}}))
    rule = AtMost(0.0, " (largest |logit| difference)")
    evidence = zero_gate_starts_as_text_model(Sources(tmp_path))
    assert [c.label for c in evidence.cells] == ["cross_attention-4", "cross_attention-6"]
    assert judge(rule, evidence)[0] == HOLDS
    (kept / "cross_attention-6/metrics/shapes/text.json").write_text(json.dumps(
        {"zero_gate": {"max_abs_logit_difference": 0.03, "pictures": 8, "design": "cross_attention"}}))
    assert judge(rule, zero_gate_starts_as_text_model(Sources(tmp_path)))[0] == FAILS


def _compared(root, mlp: list[float], **designs: list[float]) -> None:
    (root / "metrics/shapes").mkdir(parents=True)
    (root / "metrics/shapes/replicates.json").write_text(json.dumps(_replicates(mlp)))
    kept = root / "results/connectors/equal-settings"
    (kept / "mlp").mkdir(parents=True)
    (kept / "mlp/design.json").write_text(json.dumps({"connector_params": 600, "image_tokens": 49, "minutes": None}))
    for name, rights in designs.items():
        (kept / name / "metrics/shapes").mkdir(parents=True)
        (kept / name / "design.json").write_text(json.dumps({"connector_params": 690, "image_tokens": 16,
                                                             "minutes": 31.6}))
        (kept / name / "metrics/shapes/replicates.json").write_text(json.dumps(_replicates(rights)))


def test_the_findings_say_where_a_design_is_ahead_or_behind_in_every_replicate_from_the_numbers(tmp_path):
    from frozenbridge.comparison.report.findings import connectors_findings

    assert "No design has been compared yet" in connectors_findings(tmp_path)[0]
    _compared(tmp_path, [50, 40, 60], **{"resampler-16": [55, 45, 70], "codebook-1024": [40, 45, 50]})
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench/designs-cpu-2core.json").write_text(json.dumps({"rows": [
        {"measure": f"{name} (x): question step{what}", "a_value": value, "ratio": ratio}
        for name, what, value, ratio in (("mlp", " FLOPs", 402.4, 1.0), ("resampler-16", "", 0.4, 1.25),
                                         ("resampler-16", " FLOPs", 254.9, 1.58))]}))
    text = "\n".join(connectors_findings(tmp_path))
    resampler = next(line for line in text.splitlines() if line.startswith("**resampler-16**"))
    assert "690 parameters (1.15× the MLP's)" in resampler and "16 image tokens (the MLP 49)" in resampler
    assert "Held-out pairs: caption +5 [+5, +10]" in resampler and "took 32 minutes" in resampler
    assert "A training question step is 255 GFLOP (the MLP's 402) and took 0.80× the MLP's time" in resampler
    from frozenbridge.comparison.report.tables import connectors_table

    row = next(r for r in connectors_table(tmp_path) if r.startswith("| resampler-16 |"))
    assert "| 0.80× |" in row  # the table's ratio goes the findings' way: the design's time over the MLP's
    assert "Its step is not benchmarked yet" in text  # the codebook has no bench rows here
    assert "Ahead in every replicate: held-out caption, held-out count" in resampler
    assert "Behind in every replicate: none." in resampler
    codebook = next(line for line in text.splitlines() if line.startswith("**codebook-1024**"))
    assert "-10 [-10, +5]" in codebook and "Ahead in every replicate: none. Behind in every replicate: none." in codebook
    assert "binding: resampler-16 (55%)" in text  # the highest median, named from the numbers


def test_the_equal_settings_view_and_the_own_best_runs_beside_it_are_two_tables_never_mixed(tmp_path):
    """The equal-settings view (results/connectors/equal-settings/) is read alone and says what it is; runs the tool
    keeps in results/connectors/<setting>/ (the own-best comparison) form a second table, titled for it, once one
    design is there; the sweep's folder is neither."""
    from frozenbridge.comparison.report.findings import connectors_findings
    from frozenbridge.comparison.report.tables import OWN_BEST, connectors_table, designs, place
    from frozenbridge.tools.report import render_results

    _compared(tmp_path, [50, 40, 60], **{"resampler-16": [20, 30, 25]})
    (tmp_path / "results/connectors/sweep").mkdir()
    equal = connectors_table(tmp_path)
    assert equal[0].startswith("This is the equal-settings comparison, every design at the MLP's settings, kept in "
                               "`results/connectors/equal-settings/`.")
    assert "is to come in `results/connectors/<setting>/`" in equal[0] and connectors_table(tmp_path, OWN_BEST) == []
    page = render_results(tmp_path)
    assert "### Equal settings: every design at the MLP's settings" in page and "### Own best" not in page
    assert "](../results/connectors/equal-settings/exact_match.png)" in page
    own = tmp_path / "results/connectors"
    (own / "mlp/metrics/shapes").mkdir(parents=True)
    (own / "mlp/design.json").write_text(json.dumps({"connector_params": 600, "image_tokens": 49, "minutes": 9.0}))
    assert connectors_table(tmp_path, OWN_BEST) == []  # the MLP alone compares nothing
    (own / "codebook-1024/metrics/shapes").mkdir(parents=True)
    (own / "codebook-1024/design.json").write_text(json.dumps({"connector_params": 700, "image_tokens": 49,
                                                               "minutes": 40.0}))
    (own / "codebook-1024/metrics/shapes/replicates.json").write_text(json.dumps(_replicates([45, 35, 55])))
    assert "mlp" not in designs(tmp_path, OWN_BEST)  # the view's own MLP not run yet: never the default run's
    (own / "mlp/metrics/shapes/replicates.json").write_text(json.dumps(_replicates([52, 41, 58])))
    equal, best = connectors_table(tmp_path), connectors_table(tmp_path, OWN_BEST)
    assert "Beside it, read apart: the own-best view (the table after this one)." in equal[0]
    assert place(-2, "section") == "two sections before this one" and place(1, "table") == "the table after this one"
    assert best[0].startswith("This is the own-best comparison, each design at its own best setting, kept in "
                              "`results/connectors/<setting>/`. Beside it, read apart: the equal-settings view (the "
                              "table before this one).")
    assert "The equal-steps comparison, every design and the MLP trained the same stage-1 steps, is to come in " \
        "`results/connectors/equal-steps/<setting>/`." in best[0]
    designs_in = lambda rows: {r.split(" | ")[0][2:] for r in rows if r.startswith("| ") and " | seen | " in r}
    assert designs_in(equal) == {"mlp", "resampler-16"} and designs_in(best) == {"mlp", "codebook-1024"}
    page = render_results(tmp_path)
    assert page.index("### Equal settings: every design at the MLP's settings") < \
        page.index("### Own best: each design at its own best setting")
    assert "](../results/connectors/exact_match.png)" in page
    findings = "\n".join(connectors_findings(tmp_path, OWN_BEST))
    assert "**codebook-1024**" in findings and "**resampler-16**" not in findings


def test_the_figure_is_drawn_once_a_design_is_compared_and_the_page_block_is_replaced(tmp_path):
    from frozenbridge.comparison.report.figure import draw
    from frozenbridge.tools.report import FINDINGS_END, FINDINGS_START, update_connectors_page

    assert not draw(tmp_path, tmp_path / "fig.png") and not (tmp_path / "fig.png").exists()
    _compared(tmp_path, [50, 40, 60], **{"cross_attention-4": [30, 20, 40]})
    assert draw(tmp_path, tmp_path / "fig.png") and (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    page = tmp_path / "connectors.md"
    page.write_text(f"# head\n{FINDINGS_START}\nold\n{FINDINGS_END}\ntail\n")
    text = update_connectors_page(page, tmp_path)
    assert text.startswith("# head\n") and text.endswith(f"{FINDINGS_END}\ntail\n") and "old" not in text
    assert "**cross_attention-4**" in text and "Behind in every replicate: held-out caption" in text
    assert "**Equal settings.** This is the equal-settings comparison" in text and "**Own best" not in text


def test_a_setting_is_kept_replicate_by_replicate_and_resumes_at_the_first_missing_one(tmp_path, monkeypatch):
    """A sitting that stops during replicate 1 keeps replicate 0; the next call runs 1 and 2 only, and the setting's
    folder merges the replicates' cells (each replicate's own right and gap) with its facts summed over them."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n", params_yaml="replicates: [0, 1, 2]\n")
    values, calls = SETTINGS["resampler-16"], []

    def fake(name, values_, replicate, first, root, results, extra=(), step=True):
        calls.append((replicate, first))
        if len(calls) == 2:
            raise Terminated("the sitting ends")
        folder = connectors.replicate_folder(results / name, replicate)
        (folder / "metrics/shapes").mkdir(parents=True)
        cell = {str(replicate): {"right": 10.0 * replicate, "gap": 1.0}}
        (folder / "metrics/shapes/replicates.json").write_text(json.dumps({"caption": {"seen": {"caption": cell}}}))
        (folder / "metrics/shapes/text.json").write_text(json.dumps({"from": replicate}))
        (folder / "design.json").write_text(json.dumps({
            "connector_params": 7, "image_tokens": 16, "setting": values_, "pipeline": connectors.pipeline(root),
            "minutes": 1.5, "precision": "bf16 weights + autocast", "machine": {"cpu_model": "AMD EPYC",
                                                                            "bf16_path": "AVX512-BF16"}}))
        return folder

    monkeypatch.setattr(connectors, "run_replicate", fake)
    with pytest.raises(Terminated):
        run_setting("resampler-16", values, tmp_path, tmp_path / "results")
    folder = run_setting("resampler-16", values, tmp_path, tmp_path / "results")
    assert calls == [(0, True), (1, False), (1, False), (2, False)]  # replicate 0 is not run again
    merged = json.loads((folder / "metrics/shapes/replicates.json").read_text())
    assert merged == {"caption": {"seen": {"caption": {"0": {"right": 0.0, "gap": 1.0}, "1": {"right": 10.0, "gap": 1.0},
                                                       "2": {"right": 20.0, "gap": 1.0}}}}}
    facts = json.loads((folder / "design.json").read_text())
    assert (facts["replicates"], facts["minutes"], facts["precision"]) == ([0, 1, 2], 4.5, ["bf16 weights + autocast"])
    assert facts["machines"] == ["AMD EPYC (AVX512-BF16)"]
    assert json.loads((folder / "metrics/shapes/text.json").read_text()) == {"from": 0}
    assert kept(folder, connectors.pipeline(tmp_path), values, [0, 1, 2])


def _stage1(root, folder, curves):
    (folder / "metrics/shapes" if folder != root else root / "metrics/shapes").mkdir(parents=True, exist_ok=True)
    target = (root / "metrics/shapes/stage1.json") if folder == root else folder / "metrics/shapes/stage1.json"
    target.write_text(json.dumps({str(r): {"curve": [[200 + 50 * i, e, 0.5] for i, e in enumerate(c)], "steps": 0}
                                  for r, c in enumerate(curves)}))


@pytest.mark.parametrize("design, expected", [
    ([[70]] * 5, ("holds", "")),  # the share at step 200 in every replicate, the MLP at 250
    ([[0, 0, 0, 0, 0, 0, 10, 20, 30]] * 5, ("inconclusive", "still learning at step 600")),  # rising at the end
    ([[0, 0, 0, 0, 0, 0, 0, 0, 0]] * 5, ("does not hold", "")),  # flat at 0: behind, and not rising
])
def test_the_regime_views_of_section_9_read_stage1_curves_and_never_fail_a_design_still_learning(tmp_path, design,
                                                                                                 expected):
    """The cross-attention claim judged by steps to the stop rule's share: ahead in every replicate holds; a design
    that never reached it and was still rising at stage 1's most steps is inconclusive, named with its last step;
    one flat at 0 does not hold."""
    from frozenbridge.tools.verdicts.regime_readers import AtTheView, regime
    from frozenbridge.tools.verdicts.readers import Sources
    from frozenbridge.tools.verdicts.rules import judge

    (tmp_path / "params.yaml").write_text("shapes:\n  train:\n    stage1_until: {share: 0.6, every: 50, "
                                          "max_steps: 600}\n")
    kept = tmp_path / "results/connectors/equal-settings"
    for name in ("mlp", "cross_attention-4"):
        (kept / name).mkdir(parents=True)
        (kept / name / "design.json").write_text(json.dumps({"connector_params": 1, "image_tokens": 0}))
    _stage1(tmp_path, tmp_path, [[40, 65]] * 5)  # the default run's MLP: 60% at step 250 in every replicate
    _stage1(tmp_path, kept / "cross_attention-4", design)
    evidence = regime("cross_attention-4", "steps")(Sources(tmp_path))
    verdict, why = judge(AtTheView("steps"), evidence)
    assert verdict == expected[0] and expected[1] in why
    turned = {"holds": "does not hold", "does not hold": "holds"}.get(expected[0], expected[0])
    second, second_why = judge(AtTheView("steps", "second"), evidence)
    assert second == turned  # "the MLP is ahead" (the codebook's claim)
    if expected[0] == "inconclusive":  # what it would be otherwise is said for the claim judged, turned too
        assert "otherwise does not hold:" in why and "otherwise holds:" in second_why


def test_the_equal_settings_view_keeps_the_mlp_run_it_was_paired_with(tmp_path):
    """A later default run (metrics/shapes/) does not move the kept view: its mlp/ holds the metrics it was paired
    with. The own-best view's MLP is a setting of its own, never the default run's: absent until it has run."""
    from frozenbridge.comparison.report.tables import EQUAL_SETTINGS, OWN_BEST, designs

    (tmp_path / "metrics/shapes").mkdir(parents=True)
    for view in (EQUAL_SETTINGS, OWN_BEST):
        (tmp_path / view / "mlp").mkdir(parents=True, exist_ok=True)
        (tmp_path / view / "mlp" / "design.json").write_text(json.dumps({"connector_params": 1, "image_tokens": 1}))
    assert designs(tmp_path, EQUAL_SETTINGS)["mlp"][1] == tmp_path / "metrics/shapes"  # nothing kept: the default run
    kept = tmp_path / EQUAL_SETTINGS / "mlp" / "metrics/shapes"
    kept.mkdir(parents=True)
    (kept / "replicates.json").write_text(json.dumps(_replicates([50, 40, 60, 55, 45])))
    assert designs(tmp_path, EQUAL_SETTINGS)["mlp"][1] == kept
    assert "mlp" not in designs(tmp_path, OWN_BEST)
    own = tmp_path / OWN_BEST / "mlp" / "metrics/shapes"
    own.mkdir(parents=True)
    (own / "replicates.json").write_text(json.dumps(_replicates([60, 50, 70, 65, 55])))
    assert designs(tmp_path, OWN_BEST)["mlp"][1] == own


def test_a_design_paired_with_an_mlp_made_on_another_cpu_says_so_and_an_unknown_cpu_says_nothing():
    from frozenbridge.comparison.report.findings import machines_note

    amd = "AMD EPYC (AVX512-BF16)"
    intel = {"cpu_model": "Intel(R) Xeon(R) Processor", "bf16_path": "AMX + AVX512-BF16"}
    found = {"mlp": ({"machine": intel}, None), "resampler-16": ({"machines": [amd]}, None)}
    assert machines_note(found, "resampler-16") == (
        " Its replicates were made on AMD EPYC (AVX512-BF16); its MLP's on Intel(R) Xeon(R) Processor (AMX + "
        "AVX512-BF16): the pairs cross machines, so they differ by each machine's bf16 rounding as well as by design.")
    found["resampler-16"] = ({"machines": ["Intel(R) Xeon(R) Processor (AMX + AVX512-BF16)"]}, None)
    assert machines_note(found, "resampler-16") == ""  # one machine for both
    found["resampler-16"] = ({"machine": {"device": "CPU, 2 cores, x86_64, bf16 yes"}}, None)
    assert machines_note(found, "resampler-16") == ""  # a record that does not name its CPU: unknown, not another
    found["resampler-16"] = ({"machines": [amd, "Intel(R) Xeon(R) Processor (AMX + AVX512-BF16)"]}, None)
    assert "the pairs cross machines" in machines_note(found, "resampler-16")  # replicates from both CPUs


def test_own_best_replicates_pair_each_design_with_an_mlp_made_on_the_same_machine(tmp_path, monkeypatch, capsys):
    """Sittings on two kinds of machine: the first to make a replicate's MLP holds that replicate, and its designs
    run there only. An Intel sitting stopped inside replicate 1, an AMD sitting, then Intel again: every design
    replicate was made on the machine of the MLP replicate it is paired with, and nothing ran twice."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n", params_yaml="replicates: [0, 1, 2]\n")
    monkeypatch.setattr(connectors, "changed_stages", lambda root: [])
    mlp, design = {"connector.design": "mlp", "train.lr": 3e-4}, {"resampler-16": SETTINGS["resampler-16"]}
    machines = {"intel": ("Intel Xeon", "AMX + AVX512-BF16"), "amd": ("AMD EPYC", "AVX512-BF16")}
    ran, stop_at = [], [None]

    def fake(name, values, replicate, first, root, results, extra=(), step=True):
        if (name, replicate) == stop_at[0]:
            raise Terminated("the sitting ends")
        ran.append((here[0], name, replicate))
        folder = connectors.replicate_folder(results / name, replicate)
        (folder / "metrics/shapes").mkdir(parents=True)
        (folder / "metrics/shapes/replicates.json").write_text("{}")
        cpu, path = machines[here[0]]
        (folder / "design.json").write_text(json.dumps({
            "connector_params": 1, "image_tokens": 1, "setting": values, "pipeline": connectors.pipeline(root),
            "minutes": 1.0, "machine": {"cpu_model": cpu, "bf16_path": path}}))
        return folder

    here = ["intel"]
    monkeypatch.setattr(connectors, "run_replicate", fake)
    monkeypatch.setattr(connectors, "this_machine", lambda: "{} ({})".format(*machines[here[0]]))
    results = tmp_path / "results"
    stop_at[0] = ("resampler-16", 1)
    with pytest.raises(Terminated):
        connectors.compare_here(design, mlp, tmp_path, results, connectors.pipeline(tmp_path), [0, 1, 2])
    here[0], stop_at[0] = "amd", None
    connectors.compare_here(design, mlp, tmp_path, results, connectors.pipeline(tmp_path), [0, 1, 2])
    out = capsys.readouterr().out
    assert "replicate 0: its MLP was made on Intel Xeon (AMX + AVX512-BF16), so its designs run there" in out
    here[0] = "intel"
    connectors.compare_here(design, mlp, tmp_path, results, connectors.pipeline(tmp_path), [0, 1, 2])
    assert ran == [("intel", "mlp", 0), ("intel", "resampler-16", 0), ("intel", "mlp", 1),
                   ("amd", "mlp", 2), ("amd", "resampler-16", 2), ("intel", "resampler-16", 1)]
    key = connectors.pipeline(tmp_path)
    for r in (0, 1, 2):
        assert connectors.made_on(results / "resampler-16", key, design["resampler-16"], r) == \
            connectors.made_on(results / "mlp", key, mlp, r)
    merged = json.loads((results / "resampler-16/design.json").read_text())
    assert merged["replicates"] == [0, 1, 2] and merged["paired_with"] == "mlp"
    assert merged["machines"] == ["AMD EPYC (AVX512-BF16)", "Intel Xeon (AMX + AVX512-BF16)"]
    assert json.loads((results / "mlp/design.json").read_text())["replicates"] == [0, 1, 2]


def test_list_names_the_machine_that_holds_each_replicate():
    here, there = "Intel Xeon (AMX + AVX512-BF16)", "AMD EPYC (AVX512-BF16)"
    assert connectors.holder(here, here) == f"its MLP was made on {here} (this machine)"
    assert connectors.holder(there, here) == f"its MLP was made on {there}, so it runs there"
    assert connectors.holder(None, here) == "no MLP yet: the first machine to run it holds it"


def test_a_sitting_of_some_replicates_merges_every_replicate_kept_for_the_pipeline(tmp_path, monkeypatch):
    """`--replicates 1` after a sitting of replicate 0: the setting's folder merges both (a merge of the sitting's
    replicates alone once dropped replicate 0 from the page), and its galleries stay replicate 0's; a replicate kept
    for another pipeline is left out."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n", params_yaml="replicates: [0, 1, 2]\n")
    monkeypatch.setattr(connectors, "changed_stages", lambda root: [])
    mlp, design = {"connector.design": "mlp", "train.lr": 3e-4}, {"resampler-16": SETTINGS["resampler-16"]}

    galleries = []

    def fake(name, values, replicate, first, root, results, extra=(), step=True, key=None):
        galleries.extend([(name, replicate)] if first else [])
        folder = connectors.replicate_folder(results / name, replicate)
        (folder / "metrics/shapes").mkdir(parents=True)
        cell = {str(replicate): {"right": 10.0 * replicate, "gap": 1.0}}
        (folder / "metrics/shapes/replicates.json").write_text(json.dumps({"caption": {"seen": {"caption": cell}}}))
        (folder / "design.json").write_text(json.dumps({
            "connector_params": 1, "image_tokens": 1, "setting": values, "pipeline": key or connectors.pipeline(root),
            "minutes": 1.0, "machine": {"cpu_model": "Intel Xeon", "bf16_path": "AMX + AVX512-BF16"}}))
        return folder

    monkeypatch.setattr(connectors, "run_replicate", fake)
    monkeypatch.setattr(connectors, "this_machine", lambda: "Intel Xeon (AMX + AVX512-BF16)")
    results, key = tmp_path / "results", connectors.pipeline(tmp_path)
    fake("resampler-16", design["resampler-16"], 2, False, tmp_path, results, key="another-pipeline")
    connectors.compare_here(design, mlp, tmp_path, results, key, [0])
    connectors.compare_here(design, mlp, tmp_path, results, key, [1])
    # the galleries stay replicate 0's: the sitting of replicate 1 drew none (once, it drew its own over them)
    assert galleries == [("mlp", 0), ("resampler-16", 0)]
    for name in ("mlp", "resampler-16"):
        assert json.loads((results / name / "design.json").read_text())["replicates"] == [0, 1]
        merged = json.loads((results / name / "metrics/shapes/replicates.json").read_text())
        assert merged["caption"]["seen"]["caption"] == {"0": {"right": 0.0, "gap": 1.0}, "1": {"right": 10.0, "gap": 1.0}}


def test_a_replicate_folder_appears_only_with_its_design_json(tmp_path, monkeypatch):
    """run_replicate keeps the metrics and design.json in one step: a sitting stopped just after (here, while the
    galleries are drawn) leaves a folder that says its minutes and pipeline, never metrics alone."""
    from contextlib import nullcontext

    from frozenbridge.tools import repro_timing

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n", params_yaml="replicates: [0]\n")
    for name in connectors.KEPT:
        (tmp_path / "metrics" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "metrics" / name).write_text("{}")
    monkeypatch.setattr(connectors, "run_experiment", lambda argv, root: [])
    monkeypatch.setattr(connectors, "restored", lambda root: nullcontext())
    monkeypatch.setattr(connectors, "same_inputs", lambda root: None)
    monkeypatch.setattr(connectors, "design_facts", lambda root: {"connector_params": 7, "image_tokens": 16})
    monkeypatch.setattr(repro_timing, "benchmark_step", lambda: 0.9)

    def stopped(*args):
        raise Terminated("the sitting ends")

    monkeypatch.setattr(connectors, "keep_examples", stopped)
    values = SETTINGS["resampler-16"]
    with pytest.raises(Terminated):
        connectors.run_replicate("resampler-16", values, 0, True, tmp_path, tmp_path / "results")
    folder = connectors.replicate_folder(tmp_path / "results/resampler-16", 0)
    design = json.loads((folder / "design.json").read_text())
    assert (design["replicate"], design["benchmark_step_seconds"], design["pipeline"]) == (0, [0.9, 0.9],
                                                                                            pipeline(tmp_path))
    assert design["minutes"] is not None and (folder / "metrics/shapes/scores.json").is_file()
    assert kept(tmp_path / "results/resampler-16", pipeline(tmp_path), values, [0])


def test_a_replicate_counts_the_minutes_of_the_sittings_stopped_on_it(tmp_path, monkeypatch):
    """A sitting stopped mid-experiment leaves its minutes (comparison/sittings.py); the one that keeps the replicate
    adds them to its own, says how many sittings it took, and forgets them."""
    import functools
    import itertools
    from contextlib import nullcontext

    from frozenbridge.comparison import sittings as sittings_module

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _commit(tmp_path, dvc_lock="stages: {}\n", params_yaml="replicates: [0]\n")
    for name in connectors.KEPT:
        (tmp_path / "metrics" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "metrics" / name).write_text("{}")
    ticks = itertools.count(0, 600)  # each look at the clock: ten minutes later
    monkeypatch.setattr(connectors, "Sittings", functools.partial(sittings_module.Sittings, clock=lambda: next(ticks)))
    monkeypatch.setattr(connectors, "restored", lambda root: nullcontext())
    monkeypatch.setattr(connectors, "same_inputs", lambda root: None)
    monkeypatch.setattr(connectors, "design_facts", lambda root: {"connector_params": 7, "image_tokens": 16})
    monkeypatch.setattr(connectors, "keep_examples", lambda *args: None)

    def stopped(argv, root):
        raise Terminated("the sitting ends")

    values, results = SETTINGS["resampler-16"], tmp_path / "results"
    monkeypatch.setattr(connectors, "run_experiment", stopped)
    with pytest.raises(Terminated):
        connectors.run_replicate("resampler-16", values, 0, False, tmp_path, results, step=False)
    record = sittings_module.sittings_file(tmp_path, results, "resampler-16", 0)
    assert json.loads(record.read_text()) == {"minutes": [20.0]}  # started at 0, wrote at 10, stopped at 20
    assert not connectors.replicate_folder(results / "resampler-16", 0).exists()
    monkeypatch.setattr(connectors, "run_experiment", lambda argv, root: [])
    connectors.run_replicate("resampler-16", values, 0, False, tmp_path, results, step=False)
    design = json.loads((connectors.replicate_folder(results / "resampler-16", 0) / "design.json").read_text())
    assert (design["minutes"], design["sittings"]) == (20.0 + 20.0, 2) and not record.exists()


def test_a_sitting_taken_away_without_a_signal_has_written_its_minutes_as_it_ran(tmp_path):
    import time

    from frozenbridge.comparison.sittings import Sittings

    import itertools

    record, ticks = tmp_path / "r.json", itertools.count(0, 60)  # each look at the clock: a minute later
    first = Sittings(record, every=0.01, clock=lambda: next(ticks)).__enter__()  # writes 1 minute as it starts
    deadline = time.monotonic() + 10
    while json.loads(record.read_text())["minutes"][0] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # until its thread has written again, as it runs
    first.stop.set()  # the machine is gone: no __exit__, no last write
    first.thread.join()
    written = json.loads(record.read_text())["minutes"]
    assert len(written) == 1 and written[0] >= 2  # its thread wrote again while it ran
    with Sittings(record, every=3600) as second:
        assert second.earlier == written and second.total()[1] == 2
