"""The default run at its floor (tools.run_floor): a timed run's steps per stage times each step's floor from the
floor bench of the same CPU; and the step counts read back from a timed run's saved log (tools.repro_timing)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from frozenbridge.tools.run_floor import run_floor

AMX = {"cpu_model": "Intel(R) Xeon(R) Processor", "bf16_path": "AMX + AVX512-BF16"}
EPYC = {"cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16"}


def floor_file(machine: dict) -> dict:
    def ratio(name, floor, step):
        return {"measure": f"{name}: step / floor", "a": "floor s", "a_value": floor, "b": "step s", "b_value": step,
                "ratio": step / floor}
    return {"machine": machine, "rows": [
        ratio("caption step, MLP, 16 pictures, eager", 0.71, 1.36),
        ratio("caption step, MLP, 16 pictures, compiled layers", 0.70, 0.95),
        ratio("question step, MLP, 16 questions on 5 pictures, eager", 0.28, 0.68),
        ratio("question step, MLP, 16 questions on 5 pictures, compiled layers", 0.25, 0.42),
        ratio("one-token caption step, eager", 0.18, 0.38)]}


def repro(machine: dict) -> dict:
    return {"machine": machine,
            "training_step_counts": {"shapes_stage1@0": 250, "shapes_stage1@1": 300, "shapes_train@qa-0": 350,
                                     "shapes_train@caption_qa-0": 150, "shapes_train@caption_qa_lora-0": 150,
                                     "audit_train": 350},
            "training_steps_by_stage": {"shapes_stage1@0": 240.0, "shapes_stage1@1": 290.0,
                                        "shapes_train@qa-0": 150.0, "shapes_train@caption_qa-0": 60.0,
                                        "shapes_train@caption_qa_lora-0": 90.0, "audit_train": 200.0}}


def test_the_shapes_training_at_its_floor_takes_each_stages_steps_times_its_steps_floor(tmp_path):
    (tmp_path / "floor-cpu-2core.json").write_text(json.dumps(floor_file(EPYC)))
    (tmp_path / "floor-cpu-2core-amx.json").write_text(json.dumps(floor_file(AMX)))
    found = run_floor(repro(AMX), tmp_path)
    shapes = found["studies"]["shapes"]
    # the compiled rows' floors: 550 caption steps at 0.70 s, 500 question steps at 0.25 s
    assert shapes["floor_seconds"] == pytest.approx(550 * 0.70 + 500 * 0.25)
    assert shapes["steps_seconds"] == pytest.approx(240 + 290 + 150 + 60)
    assert shapes["stages"] == ["shapes_stage1@0", "shapes_stage1@1", "shapes_train@qa-0", "shapes_train@caption_qa-0"]
    assert found["left_out"] == ["shapes_train@caption_qa_lora-0", "audit_train"]  # LoRA adds products of its own
    assert found["floor_file"] == "floor-cpu-2core-amx.json"


def test_no_floor_of_the_runs_own_cpu_or_no_counts_gives_nothing(tmp_path):
    (tmp_path / "floor-cpu-2core.json").write_text(json.dumps(floor_file(EPYC)))
    assert run_floor(repro(AMX), tmp_path) is None  # another CPU's floor is never used
    assert run_floor({**repro(EPYC), "training_step_counts": {}}, tmp_path) is None
    assert run_floor(repro(EPYC), tmp_path)["floor_file"] == "floor-cpu-2core.json"


def test_the_results_page_says_the_floor_beside_the_timed_run(tmp_path):
    from frozenbridge.tools.report import repro_time

    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "floor-cpu-2core-amx.json").write_text(json.dumps(floor_file(AMX)))
    saved = {**repro(AMX), "machine": {"cpu": "2 cores, x86_64", "device": "cpu", "torch": "2.13.0+cpu",
                                       "date": "2026-12-05", **AMX},
             "benchmark_step_seconds": 1.1, "total_seconds": 3000.0, "training_steps_seconds": 1030.0,
             "categories": {"data": 60.0, "training": 1500.0, "audit study": 2020.0}, "stage_count": 20}
    text = repro_time(saved, tmp_path)[0]
    # the shapes study took 3000 - 2020 = 980 s, 740 of them in the counted steps: 240 s beside the 510 s floor
    assert "so the shapes study 16 min 20 s" in text and "(4 min 00 s: data, evaluation, start-ups, analyses)" in text
    assert "the shapes study at that floor would take 12 min 30 s (it took 16 min 20 s)" in text
    assert "4 stage-1 and question-recipe stages spent 12 min 20 s inside their training steps" in text
    assert "come to 8 min 30 s, 1.45× less" in text and "bench/floor-cpu-2core-amx.json" in text
    assert "Left out: shapes_train@caption_qa_lora-0, audit_train" in text
    assert "At its floor" not in repro_time(saved)[0]  # no bench folder given: no floor line


LOG = """benchmark step (batch 16, 49 image tokens): 1.105 s
Running stage 'shapes_data':
> python stages/shapes/data.py
Running stage 'shapes_stage1@0':
INFO frozenbridge.shapes: stage1/0: 250 steps in 240.0 s, 0.96 s a step (bf16 weights + autocast)
train: 100%|##########| 250/250\rRunning stage 'shapes_train@qa-0':
INFO frozenbridge.shapes: qa/0: 350 steps in 150.0 s, 0.43 s a step (bf16 weights + autocast)
Running stage 'audit_train':
INFO frozenbridge.audit: audit: 350 steps in 200.5 s (bf16 weights + autocast)
"""


def _steps_from(tmp_path, saved: dict):
    (tmp_path / "repro.json").write_text(json.dumps(saved))
    (tmp_path / "repro.log").write_text(LOG)
    return subprocess.run([sys.executable, "-m", "frozenbridge.tools.repro_timing", "--json",
                           str(tmp_path / "repro.json"), "--steps-from", str(tmp_path / "repro.log")],
                          capture_output=True, text=True, timeout=120)


def test_a_timed_runs_log_gives_back_its_step_counts_and_refuses_another_runs_log(tmp_path):
    proc = _steps_from(tmp_path, {"training_steps_seconds": 590.5, "total_seconds": 900.0})
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((tmp_path / "repro.json").read_text())
    assert saved["training_step_counts"] == {"shapes_stage1@0": 250, "shapes_train@qa-0": 350, "audit_train": 350}
    assert saved["training_steps_by_stage"]["audit_train"] == 200.5 and saved["total_seconds"] == 900.0
    proc = _steps_from(tmp_path, {"training_steps_seconds": 591.0})
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "another run's log" in proc.stderr


def test_the_stages_dvc_skipped_are_kept_and_the_page_says_the_time_leaves_them_out(tmp_path):
    from frozenbridge.tools.repro_report import repro_time
    from frozenbridge.tools.repro_timing import StageLog, step_fields

    log = StageLog()
    for line in ["Running stage 'shapes_stage1@0':", "INFO frozenbridge.train: stage1/0: 250 steps in 200.5 s, 0.80 s",
                 "Stage 'shapes_text' didn't change, skipping", "Stage 'headline' didn't change, skipping",
                 "Stage 'shapes_codebook' is cached - skipping run, checking out outputs"]:
        log.read(line)
    fields = step_fields(log)
    assert fields["skipped_stages"] == ["shapes_text", "headline", "shapes_codebook"]
    saved = {"machine": {"cpu": "2 cores, x86_64", "device": "cpu", "torch": "2.13.0+cpu", "date": "2026-12-06"},
             "benchmark_step_seconds": 1.0, "total_seconds": 600.0, "categories": {"training": 300.0},
             "stage_count": 1, "stages": {"shapes_stage1@0": 300.0}, **fields}
    text = repro_time(saved)[0]
    assert "`dvc repro` of 1 stages took" in text and "3 more stages were up to date" in text and \
        "not in this time: shapes_text, headline, shapes_codebook." in text and "of every stage" not in text
    assert "`dvc repro` of every stage took" in repro_time({**saved, "skipped_stages": []})[0]
