"""Stage 1's stopping rule (shapes.training.stage1_rule): a fresh run of every language-model family trains the steps
the rule gives, read from its own training captions, and no other; the params that set the rule are checked."""

from __future__ import annotations

import json
import logging

import pytest
import torch
from test_train import tiny_split

from frozenbridge.core.backbones import load_language
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.forecast import forecast_line
from frozenbridge.shapes.params import EvaluateParams, Params, ShapesParams, Stage1Until, TrainParams, load_params
from frozenbridge.shapes.training import stage1_rule
from frozenbridge.shapes.training.run import train
from frozenbridge.testing.tiny_language import LM_FAMILIES

CPU = torch.device("cpu")
RULE = Stage1Until(share=0.5, items=3, every=2, max_steps=7)  # checks after steps 3, 5 and 7


def params(until: Stage1Until = RULE) -> Params:
    return Params(shapes=ShapesParams(train=TrainParams(batch_size=4, stage1_steps=3, stage2_steps=2,
                                                        stage1_until=until),
                                      evaluate=EvaluateParams(batch_size=8, caption_tokens=6)))


def test_where_the_rule_reads_and_stops():
    t = params().shapes.train
    assert [s for s in range(1, 10) if stage1_rule.is_check(s, t)] == [3, 5, 7, 9]
    assert stage1_rule.stop_step([(3, 0.0), (5, 49.9), (7, 50.0)], t) == 7
    assert stage1_rule.stop_step([(3, 66.7)], t) == 3
    assert stage1_rule.stop_step([(3, 0.0), (5, 0.0), (7, 0.0)], t) == 7  # never met: its most steps
    off = params(Stage1Until(share=0.0, max_steps=600)).shapes.train
    assert not any(stage1_rule.is_check(s, off) for s in range(1, 700))
    assert stage1_rule.rule_steps(off) == 3 and stage1_rule.rule_steps(t) == 7


@pytest.mark.parametrize("family", ["qwen2", *LM_FAMILIES])
def test_a_fresh_run_trains_the_steps_the_rule_gives_for_its_model(family, family_lms, tiny_models, tmp_path):
    """Random-weight models write no caption right, so the rule reads 0% at each check and stage 1 runs to its
    most steps; a run that bypassed the rule would stop at stage1_steps (3) with no checks."""
    lm = load_language(str(tiny_models["qwen2"] if family == "qwen2" else family_lms / family))
    info = train(params(), None, 0, tiny_split(), lm, CPU, False, tmp_path / "s1")
    run = json.loads((tmp_path / "s1" / "run.json").read_text())
    assert [s for s, _ in info["stage1_checks"]] == [3, 5, 7]
    assert run["steps"] == stage1_rule.stop_step(info["stage1_checks"], params().shapes.train) == 7
    assert len((tmp_path / "s1" / "history.csv").read_text().splitlines()) == 1 + 7


def test_the_run_stops_at_the_first_check_that_passes(tiny_models, tmp_path, monkeypatch, caplog):
    """The decision is the run's own: captions read 0, 60, then 100% exact stop the run at the second check."""
    reads = iter([0.0, 60.0, 100.0])
    monkeypatch.setattr(stage1_rule, "caption_accuracy", lambda *a: next(reads))
    lm = load_language(str(tiny_models["qwen2"]))
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        info = train(params(), None, 0, tiny_split(), lm, CPU, False, tmp_path / "s1")
    assert info["stage1_checks"] == [(3, 0.0), (5, 60.0)] and info["steps"] == 5
    said = [r.getMessage() for r in caplog.records if "training captions exact" in r.getMessage()]
    assert said[0].endswith("goes on") and said[1].endswith("stops"), said
    forecast = [r.getMessage() for r in caplog.records if "s a step (median" in r.getMessage()]
    assert forecast and "its 3 to 7 steps take about" in forecast[0]


def test_recipes_after_stage_1_and_qa_are_not_extended(tiny_models, tmp_path):
    """qa has no captions to read: it trains stage1_steps + stage2_steps whatever the rule."""
    lm = load_language(str(tiny_models["qwen2"]))
    info = train(params(), "qa", 0, tiny_split(), lm, CPU, False, tmp_path / "qa")
    assert info["steps"] == 3 + 2 and "stage1_checks" not in info


def test_the_forecast_line_gives_both_ends():
    line = forecast_line("stage1/0", "cpu", "bf16", 2.0, 600, None, 200)
    assert "so its 200 to 600 steps take about 7 min to 20 min" in line
    assert "so its 200 steps take about" in forecast_line("stage1/0", "cpu", "bf16", 2.0, 200, None, 200)


@pytest.mark.parametrize("until, key, allowed", [
    ({"share": 1.0}, "shapes.train.stage1_until.share", "a number in [0, 1)"),
    ({"max_steps": 100}, "shapes.train.stage1_until.max_steps", "an integer >= shapes.train.stage1_steps (200)"),
    ({"every": 0}, "shapes.train.stage1_until.every", "an integer >= 1"),
])
def test_bad_rule_params_are_refused_in_one_line(tmp_path, until, key, allowed):
    (tmp_path / "params.yaml").write_text(json.dumps({"shapes": {"train": {"stage1_until": until}}}))
    with pytest.raises(FrozenbridgeError) as e:
        load_params(tmp_path / "params.yaml")
    assert key in str(e.value) and allowed in str(e.value) and "\n" not in str(e.value)
