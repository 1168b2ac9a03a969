"""Before a run's long part, one log line: device, precision, the measured step time and what the run will take."""

from __future__ import annotations

import logging
import re

import pytest
import torch
from test_train import tiny_split

from frozenbridge.core import forecast
from frozenbridge.core.backbones import load_language
from frozenbridge.core.forecast import Pace, StepClock, duration, forecast_line
from frozenbridge.shapes.params import Params, ShapesParams, Stage1Until, TrainParams
from frozenbridge.shapes.training.run import study_steps, train


@pytest.fixture
def clock(monkeypatch):
    """perf_counter advancing by the given gaps (seconds) one call after another: the step times."""
    def steps(*gaps):
        t = [0.0]
        for g in gaps:
            t.append(t[-1] + g)
        ticks = iter(t + [t[-1]] * 1000)
        monkeypatch.setattr(forecast.time, "perf_counter", lambda: next(ticks))
    return steps


def test_the_clock_leaves_out_the_first_step_and_takes_the_median_of_the_next_three(clock):
    clock(30.0, 2.0, 9.0, 3.0, 3.0, 3.0, 2.9, 3.1, 3.0, 3.0)  # a slow first step (compiling), then 2, 9, 3: median 3
    c = StepClock(steps=10)
    said = [c.lap() for _ in range(10)]
    assert said[3] == Pace(3.0, 2, 4) and said[:3] + said[4:] == [None] * 9  # said once: the pace did not move


def test_a_machine_busy_at_the_start_is_corrected_at_a_tenth_of_the_loop(clock):
    """Steps 2-4 at 6 s (another process busy), then 1.9 s: the first look alone is three times the real pace
    (today's rule before the second look); the settled look, after step 20 of 200, is within 25% of it."""
    real = 1.9
    clock(10.0, 6.0, 6.0, 6.0, *[real] * 196)
    c = StepClock(steps=200)
    said = [(i + 1, p) for i in range(200) if (p := c.lap()) is not None]
    assert [step for step, _ in said] == [4, 20]
    first, settled = said[0][1], said[1][1]
    assert abs(first.seconds - real) > 0.25 * real  # the first look alone is far off
    assert abs(settled.seconds - real) <= 0.25 * real and settled.earlier == first.seconds
    assert (settled.first, settled.last) == (5, 20)
    line = forecast_line("stage1/0", "cpu", "bf16", settled, 180)
    assert line == ("stage1/0: cpu, bf16: the pace settled at 1.90 s a step (median of steps 5-20; the first look "
                    "said 6.00 s), so its 180 steps left take about 6 min")


def test_a_loop_too_short_to_forecast_says_nothing(clock):
    clock(1.0, 1.0, 1.0, 1.0)
    c = StepClock(steps=4)
    assert [c.lap() for _ in range(4)] == [None] * 4


@pytest.mark.parametrize("seconds, said", [(40, "40 s"), (89, "89 s"), (600, "10 min"), (5399, "90 min"),
                                           (5400, "1.5 h"), (4.53 * 1400, "1.8 h")])
def test_durations_read_as_people_say_them(seconds, said):
    assert duration(seconds) == said


def test_the_line_names_device_precision_step_and_totals():
    line = forecast_line("stage1/0", "cpu", "fp32", 4.53, 200, ("every shapes training run in params.yaml", 1400))
    assert line == ("stage1/0: cpu, fp32: 4.53 s a step (median of steps 2-4), so its 200 steps take about 15 min; "
                    "every shapes training run in params.yaml (1,400 steps) about 1.8 h at this step time")


def test_study_steps_count_stage1_and_every_recipe_per_replicate():
    p = Params(replicates=(0, 1, 2), shapes=ShapesParams(recipes=("caption", "qa", "caption_qa_lora"),
                                                         train=TrainParams(stage1_steps=200, stage2_steps=150)))
    assert study_steps(p) == 3 * (200 + 0 + 350 + 150)


def test_a_training_run_logs_the_line_once_with_its_own_numbers(tiny_models, tmp_path, caplog):
    lm = load_language(str(tiny_models["qwen2"]))
    p = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                     batch_size=4, stage1_steps=7, stage2_steps=2)))
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        train(p, None, 0, tiny_split(), lm, torch.device("cpu"), False, tmp_path / "s1")
    lines = [r.getMessage() for r in caplog.records if "s a step (median" in r.getMessage()]
    assert len(lines) == 1
    m = re.fullmatch(r"stage1/0: cpu, fp32: ([\d.]+) s a step \(median of steps 2-4\), so its 7 steps take about "
                     r"(.+); every shapes training run in params.yaml \(([\d,]+) steps\) about (.+) at this step time",
                     lines[0])
    assert m, lines[0]
    step = float(m.group(1))
    assert int(m.group(3).replace(",", "")) == study_steps(p) == 5 * (7 + 0 + 9 + 2)
    # the totals come from the step before the line rounds it to hundredths
    near = [step - 0.005, step, step + 0.005]
    assert m.group(2) in {duration(s * 7) for s in near} and m.group(4) in {duration(s * study_steps(p)) for s in near}


def test_the_forecast_command_times_stage_one_steps_and_multiplies(tiny_models, tmp_path):
    """tools.forecast with no data yet: stand-in features, the step measured as a stage measures it, times every
    shapes step params.yaml asks for."""
    from frozenbridge.core.params import LanguageParams
    from frozenbridge.tools.forecast import forecast

    p = Params(language=LanguageParams(name=str(tiny_models["qwen2"])), shapes=ShapesParams(
        train=TrainParams(stage1_until=Stage1Until(share=0), batch_size=4, stage1_steps=10, stage2_steps=5)))
    row = forecast(p, torch.device("cpu"), "fp32", tmp_path / "no-data")
    assert row["runs_as"] == "fp32" and row["steps_from"] == "stand-in features and one caption"
    assert row["study_steps"] == study_steps(p) == 5 * (10 + 15 + 5) and row["step_seconds"] > 0
    # the step is kept to 3 decimals, the total from the unrounded step
    assert abs(row["study_seconds"] - row["step_seconds"] * row["study_steps"]) <= 0.0005 * row["study_steps"] + 0.05


def test_the_forecast_command_takes_the_settled_pace_after_a_busy_start(tiny_models, tmp_path, clock):
    """Steps 2-4 slow (the machine busy for a moment), 5-8 at the real pace: tools.forecast gives the real pace."""
    from frozenbridge.core.params import LanguageParams
    from frozenbridge.tools.forecast import step_time

    clock(10.0, 6.0, 6.0, 6.0, 1.9, 2.0, 1.9, 1.8)
    p = Params(language=LanguageParams(name=str(tiny_models["qwen2"])),
               shapes=ShapesParams(train=TrainParams(batch_size=4)))
    assert step_time(p, torch.device("cpu"), "fp32", tmp_path / "no-data") == pytest.approx(1.9)
