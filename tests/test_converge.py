"""The convergence benchmark: overrides are validated like params.yaml, thresholds are read off the curve, and the
summary judges a setting by its worst seed (a seed that never got there is worse than any that did)."""

from __future__ import annotations

import json

import pytest
import torch
from test_train import tiny_split

from frozenbridge.core.backbones import load_language
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.sweeps.converge import SETTINGS, apply_overrides, run_one, summarize, time_step


def test_every_setting_is_valid_and_names_the_same_knobs():
    knobs = {frozenset(o) for o in SETTINGS.values()}
    assert len(knobs) == 1  # each row states every knob, so it means the same whatever params.yaml holds
    for overrides in SETTINGS.values():
        apply_overrides({}, overrides)


def test_overrides_are_checked_like_params_yaml():
    p = apply_overrides({"shapes": {"train": {"lr": 0.001}}}, {"train.lr": 0.002, "connector.order": "columns"})
    assert p.shapes.train.lr == 0.002 and p.shapes.connector.order == "columns"  # keys under shapes:
    with pytest.raises(FrozenbridgeError, match="shapes.connector.order = 'diagonal'"):
        apply_overrides({}, {"connector.order": "diagonal"})
    with pytest.raises(FrozenbridgeError, match="unknown key shapes.train.lrr"):
        apply_overrides({}, {"train.lrr": 0.1})


def run(seed: int, curve: list[tuple[int, float]]) -> dict:
    return {"seed": seed, "curve": curve, "step_seconds": 1.0,
            **{f"steps_to_{t}": next((s for s, e in curve if e >= t), None) for t in (50, 70)}}


def test_summary_reports_median_and_worst_seed():
    runs = [run(0, [(25, 10), (50, 55), (75, 72)]), run(1, [(25, 52), (50, 71)]), run(2, [(25, 0), (50, 60)])]
    s = summarize(runs, 75)
    assert (s["median_50"], s["worst_50"]) == (50, 50)
    assert (s["median_70"], s["worst_70"]) == (75, None)  # seed 2 never reached 70% within the steps
    assert s["best_exact"] == [72, 71, 60]
    even = summarize(runs[:2], 75)
    assert even["median_50"] == 37.5 and even["median_70"] == 62.5


def test_run_one_trains_and_scores_captions(tiny_models):
    lm = load_language(str(tiny_models["qwen2"]))
    data, test = tiny_split(12, seed=0), tiny_split(6, seed=1)
    params = apply_overrides({"shapes": {"train": {"batch_size": 4, "precision": "fp32"},
                                         "evaluate": {"caption_tokens": 6, "batch_size": 8}}}, {})
    assert isinstance(params, Params)
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    out = run_one(params, 0, data, test, lm, torch.device("cpu"), False, steps=4, every=2, items=6)
    assert [s for s, _ in out["curve"]] == [2, 4] and out["steps_run"] == 4
    assert all(0 <= e <= 100 for _, e in out["curve"]) and out["step_seconds"] > 0
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())  # the LM stayed frozen
    assert time_step(params, data, lm, torch.device("cpu"), False, steps=2) > 0


def test_workers_sharing_a_setting_keep_each_others_seeds(tmp_path):
    from frozenbridge.shapes.sweeps.converge import save

    path = tmp_path / "converge.json"
    mode = {"overrides": {"train.lr": 0.001}, "steps": 75, "heldout": False, "stop": True}
    for r in (run(1, [(25, 52)]), run(0, [(25, 10), (50, 55)])):  # each worker knows only its own seed
        save(path, "a", {**mode, "runs": [r], "summary": summarize([r], 75)}, {"items": 6})
    saved = json.loads(path.read_text())["results"]["a"]
    assert [r["seed"] for r in saved["runs"]] == [0, 1] and saved["summary"]["worst_50"] == 50
    save(path, "a", {**mode, "steps": 100, "runs": [run(2, [(25, 0)])], "summary": {}}, {})  # other mode: replaced
    assert [r["seed"] for r in json.loads(path.read_text())["results"]["a"]["runs"]] == [2]
