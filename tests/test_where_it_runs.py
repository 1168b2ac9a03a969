"""The "where it runs" table is computed from the JSON the forecast and reference benchmarks wrote."""

from __future__ import annotations

import json

from frozenbridge.tools.where_it_runs import FORECAST, REFERENCE, where_it_runs

MACHINE = {"device": "CPU, 2 cores, x86_64, bf16 yes", "date": "2026-12-02"}


def write(bench, name, data):
    bench.mkdir(exist_ok=True)
    (bench / name).write_text(json.dumps(data))


def forecast(bf16_step: float, fp32_step: float, replicates: int | None = None) -> dict:
    row = {"study_steps": 1400, **({"replicates": replicates} if replicates else {})}
    return {"machine": MACHINE, "rows": [
        {**row, "precision": "auto", "runs_as": "bf16 weights + autocast", "step_seconds": bf16_step,
         "study_seconds": bf16_step * 1400},
        {**row, "precision": "fp32", "runs_as": "fp32", "step_seconds": fp32_step, "study_seconds": fp32_step * 1400}]}


def test_nothing_measured_gives_no_table(tmp_path):
    assert where_it_runs(tmp_path / "bench") == []


def test_the_fp32_row_is_its_step_against_the_bf16_one(tmp_path):
    bench = tmp_path / "bench"
    write(bench, FORECAST, forecast(1.0, 4.5))
    rows = where_it_runs(bench)
    assert "| 4.50 s (4.5× the bf16 step) | its 1,400 steps about 1.8 h |" in rows[-1]
    assert rows[-2].endswith("| 1.00 s | its 1,400 steps about 23 min |")
    write(bench, FORECAST, forecast(1.0, 2.0))
    assert "(2.0× the bf16 step) | its 1,400 steps about 47 min |" in where_it_runs(bench)[-1]


def test_the_reference_row_sets_its_step_beside_the_references(tmp_path):
    bench = tmp_path / "bench"
    write(bench, REFERENCE, {"machine": MACHINE, "runs": {"stage1": {"median_step_s": 3.06}},
                             "memory": {"peak_rss_mb": 6144},
                             "study": {"seconds": 4 * 3600, "reference_seconds": 6188,
                                       "reference_step_s": {"stage1": 1.02}}})
    row = where_it_runs(bench)[-1]
    assert "| 3.06 s (the reference's Mac: 1.02 s; 3.00×) |" in row
    assert "about 4.0 h (with the reference's own step times: 1.7 h); peak memory 6.0 GB |" in row


def test_the_quick_look_row_is_read_from_its_scores(tmp_path):
    from frozenbridge.tools.where_it_runs import QUICK

    bench = tmp_path / "bench"
    write(bench, QUICK, {"machine": MACHINE, "steps": 200, "train_pictures": 1000, "exact": 41, "of": 60,
                         "seconds": 330.0, "stage_seconds": {"pictures": 12.0, "encode": 48.0, "models": 10.0,
                                                             "train": 230.0, "captions": 30.0},
                         "benchmark_step_seconds": 2.33})
    (row,) = [r for r in where_it_runs(bench) if "quick look" in r]
    assert row == ("| the quick look: 200 caption steps on 1,000 pictures (`frozenbridge quick-look`, 2026-12-02; "
                   "that day's benchmark step 2.33 s) | 1.15 s (the run's checks included) | 6 min in all, of which drawing and encoding 60 s; 41 of 60 "
                   "test captions exactly right |")


def test_the_measured_training_time_is_quoted_only_beside_a_forecast_of_as_many_replicates(tmp_path):
    bench = tmp_path / "bench"
    write(bench, FORECAST, forecast(1.0, 4.0, replicates=2))
    stages = {"shapes_data": 5.0, "shapes_stage1@0": 200.0, "shapes_stage1@1": 200.0, "shapes_train@qa-1": 300.0}
    write(bench, "repro.json", {"machine": {"bf16_path": "AMX + AVX512-BF16"}, "stages": stages,
                                "training_steps_seconds": 1020.0})
    assert "the last `dvc repro` spent 17 min inside them" in where_it_runs(bench)[-2]
    write(bench, "repro.json", {"machine": {"bf16_path": "AMX + AVX512-BF16"}, "training_steps_seconds": 1020.0,
                                "stages": {**stages, "shapes_stage1@2": 200.0, "shapes_train@qa-4": 300.0}})
    assert "dvc repro" not in where_it_runs(bench)[-2]


def test_each_row_names_the_day_it_ran_and_the_heading_none(tmp_path):
    """The three commands run on different days (a quick look redone, a forecast kept): a single date in the heading
    would be false for some row."""
    from frozenbridge.tools.where_it_runs import QUICK

    bench = tmp_path / "bench"
    write(bench, FORECAST, forecast(1.0, 4.5))
    write(bench, QUICK, {"machine": {**MACHINE, "date": "2026-12-06"}, "steps": 200, "train_pictures": 1000,
                         "exact": 41, "of": 60, "seconds": 330.0,
                         "stage_seconds": {"pictures": 12.0, "encode": 48.0, "train": 230.0}})
    heading, _, _, _, bf16, fp32, quick = where_it_runs(bench)
    assert "2026-12" not in heading and heading.startswith("Time a step and what it comes to, measured on CPU, 2 cores")
    assert "(`tools.forecast`, 2026-12-02) |" in bf16 and "(`tools.forecast --precision fp32`, 2026-12-02) |" in fp32
    assert "(`frozenbridge quick-look`, 2026-12-06) |" in quick


def test_the_measured_training_time_beside_the_forecast_is_the_shapes_studys_steps_only(tmp_path):
    """The forecast is of the shapes training; the audit's steps, which the timing also counts, are not part of it."""
    bench = tmp_path / "bench"
    write(bench, FORECAST, forecast(1.0, 4.0, replicates=1))
    by_stage = {"shapes_stage1@0": 600.0, "shapes_train@qa-0": 420.0, "audit_train": 240.0}
    write(bench, "repro.json", {"machine": {"bf16_path": "AMX + AVX512-BF16"}, "training_steps_seconds": 1260.0,
                                "training_steps_by_stage": by_stage,
                                "stages": {"shapes_stage1@0": 610.0, "shapes_train@qa-0": 430.0}})
    assert "the last `dvc repro` spent 17 min inside them" in where_it_runs(bench)[-2]  # 1,020 s, not 1,260
