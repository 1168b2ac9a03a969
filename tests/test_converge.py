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
from frozenbridge.shapes.sweeps.converge import run_one, time_step
from frozenbridge.shapes.sweeps.converge_results import summarize
from frozenbridge.shapes.sweeps.converge_settings import SETTINGS, apply_overrides


def test_every_setting_is_valid_and_names_the_same_knobs():
    knobs = {frozenset(o) for o in SETTINGS.values()}
    assert len(knobs) == 1  # each row states every knob, so it means the same whatever params.yaml holds
    for overrides in SETTINGS.values():
        apply_overrides({}, overrides)


def test_overrides_are_checked_like_params_yaml():
    p = apply_overrides({"shapes": {"train": {"lr": 0.001}}}, {"train.lr": 0.002, "connector.mlp.order": "columns"})
    assert p.shapes.train.lr == 0.002 and p.shapes.connector.mlp.order == "columns"  # keys under shapes:
    with pytest.raises(FrozenbridgeError, match="shapes.connector.mlp.order = 'diagonal'"):
        apply_overrides({}, {"connector.mlp.order": "diagonal"})
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


def test_caption_accuracy_is_the_share_of_exact_captions_on_hand_made_predictions():
    """Scripted captions for 6 pictures: right, right up to the ends, wrong, right, a trailing period, right."""
    from types import SimpleNamespace

    from frozenbridge.shapes.params import EvaluateParams
    from frozenbridge.shapes.sweeps.converge import caption_accuracy

    test = tiny_split(6, seed=1)
    said = {0: test.captions[0], 1: f" {test.captions[1]}\n", 2: "a wrong caption", 3: test.captions[3],
            4: test.captions[4] + ".", 5: test.captions[5]}
    vlm = SimpleNamespace(tokens=SimpleNamespace(ids=str.split),
                          generate=lambda items, feats, n: [said[it.image] for it in items])
    cfg = EvaluateParams(items=6, batch_size=4, caption_tokens=6, answer_tokens=3)
    assert caption_accuracy(vlm, test, 6, cfg) == pytest.approx(100 * 4 / 6)
    assert caption_accuracy(vlm, test, 4, cfg) == 75.0  # the first 4 pictures only: 0, 1 and 3 right
    assert caption_accuracy(vlm, test, 20, cfg) == pytest.approx(100 * 4 / 6)  # no more items than pictures


def test_run_one_trains_and_scores_captions(tiny_models):
    """The curve's numbers are the exact-match share of the captions the run wrote for the first 6 test pictures,
    recounted here from those captions and the pictures' own."""
    from unittest import mock

    from frozenbridge.shapes.training import stage1_rule

    lm = load_language(str(tiny_models["qwen2"]))
    data, test = tiny_split(12, seed=0), tiny_split(6, seed=1)
    params = apply_overrides({"shapes": {"train": {"batch_size": 4, "precision": "fp32"},
                                         "evaluate": {"caption_tokens": 6, "batch_size": 8}}}, {})
    assert isinstance(params, Params)
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    written = []
    generation = stage1_rule.run_generation

    def recorded(vlm, rows, *args):
        preds = generation(vlm, rows, *args)
        written.append((preds, [r.target for r in rows]))
        return preds

    with mock.patch.object(stage1_rule, "run_generation", recorded):
        out = run_one(params, 0, data, test, lm, torch.device("cpu"), False, steps=4, every=2, items=6)
    assert [s for s, _ in out["curve"]] == [2, 4] and out["steps_run"] == 4
    assert [targets for _, targets in written] == [test.captions[:6]] * 2
    recount = [round(100 * sum(p.strip() == t.strip() for p, t in zip(preds, targets, strict=True)) / 6, 2)
               for preds, targets in written]
    assert [e for _, e in out["curve"]] == recount and out["step_seconds"] > 0
    assert out["steps_to_50"] == next((s for s, e in zip((2, 4), recount, strict=True) if e >= 50), None)
    assert all(torch.equal(before[k], v) for k, v in lm.model.state_dict().items())  # the LM stayed frozen
    assert time_step(params, data, lm, torch.device("cpu"), False, steps=2) > 0
    written.clear()
    with mock.patch.object(stage1_rule, "run_generation", recorded):
        out = run_one(params, 0, data, test, lm, torch.device("cpu"), False, steps=2, every=2, items=6,
                      train_curve=True)
    assert [targets for _, targets in written] == [test.captions[:6], data.captions[:6]]  # test, then training
    train = round(100 * sum(p.strip() == t.strip() for p, t in zip(*written[1], strict=True)) / 6, 2)
    assert out["train_curve"] == [(2, train)]


def test_workers_sharing_a_setting_keep_each_others_seeds(tmp_path):
    from frozenbridge.shapes.sweeps.converge_results import save

    path = tmp_path / "converge.json"
    mode = {"overrides": {"train.lr": 0.001}, "steps": 75, "heldout": False, "stop": True}
    for r in (run(1, [(25, 52)]), run(0, [(25, 10), (50, 55)])):  # each worker knows only its own seed
        save(path, "a", {**mode, "runs": [r], "summary": summarize([r], 75)}, {"items": 6})
    saved = json.loads(path.read_text())["results"]["a"]
    assert [r["seed"] for r in saved["runs"]] == [0, 1] and saved["summary"]["worst_50"] == 50
    save(path, "a", {**mode, "steps": 100, "runs": [run(2, [(25, 0)])], "summary": {}}, {})  # other mode: replaced
    assert [r["seed"] for r in json.loads(path.read_text())["results"]["a"]["runs"]] == [2]


def write_study(root, qwen2) -> tuple:
    """A params file naming the tiny language model and a data folder with tiny train and seen-pair test splits:
    what `converge` reads, on disk, so worker processes can load it as the CLI does."""
    import pyarrow.parquet as pq
    import yaml

    from frozenbridge.core.feature_cache import write_features
    from frozenbridge.shapes.data.splits import generate_split, split_seeds
    from frozenbridge.shapes.params import DataParams, SplitSizes

    meta = {"output_shape": [4, 4, 32], "encoder": "tiny", "revision": "x", "features": "patches", "layer": None,
            "grid": [4, 4], "width": 32, "tokens": 16, "image_size": 64}
    for split, n, seed in (("train", 12, 0), ("test_seen", 6, 1)):
        cfg = DataParams(image_size=64, sizes=SplitSizes(train=n))
        table = generate_split(split, n, cfg, split_seeds(seed)[split])
        (root / "pictures").mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / "pictures" / f"{split}.parquet")
        feats = torch.randn(n, 16, 32, generator=torch.Generator().manual_seed(seed))
        write_features(root / "features" / f"{split}.parquet", iter([(table.column("id").to_numpy(), feats, {})]),
                       n, "float16", meta, split)
    params = root / "params.yaml"
    params.write_text(yaml.safe_dump({
        "device": "cpu", "vision": {"name": "tiny", "layer": None}, "language": {"name": str(qwen2)},
        "shapes": {"train": {"precision": "fp32"}, "evaluate": {"caption_tokens": 6, "batch_size": 8}}}))
    return params, root


def sweep(params, data, out, *flags: str) -> dict:
    """converge's main() in this process, as its command line; torch's thread count put back after."""
    import sys
    from unittest import mock

    from frozenbridge.shapes.sweeps.converge import main

    threads = torch.get_num_threads()
    argv = ["converge", "--params", str(params), "--data", str(data), "--json", str(out), "--steps", "6",
            "--every", "3", "--items", "6", "--no-stop", "--only", "columns, batch 8", *flags]
    try:
        with mock.patch.object(sys, "argv", argv):
            main()
    finally:
        torch.set_num_threads(threads)
    return json.loads(out.read_text()) if out.is_file() else {}


def test_jobs_run_seeds_in_workers_with_the_numbers_of_one_process(tiny_models, tmp_path):
    from joblib.externals.loky import get_reusable_executor

    params, data = write_study(tmp_path, tiny_models["qwen2"])
    alone = sweep(params, data, tmp_path / "alone.json", "--seeds", "0", "1", "--threads", "1")
    try:
        parallel = sweep(params, data, tmp_path / "jobs.json", "--seeds", "0", "1", "--threads", "2", "--jobs", "2")
    finally:
        get_reusable_executor().shutdown(wait=True)  # the workers hold a language model each

    def numbers(saved: dict) -> list[dict]:  # a run's step time is the one thing that may differ
        runs = saved["results"]["columns, batch 8"]["runs"]
        return [{k: v for k, v in r.items() if k != "step_seconds"} for r in runs]

    assert [r["seed"] for r in numbers(parallel)] == [0, 1] and [len(r["curve"]) for r in numbers(parallel)] == [2, 2]
    assert numbers(parallel) == numbers(alone)  # 1 thread a run either way: the same runs, the same numbers
    assert numbers(alone)[0]["final_loss"] != numbers(alone)[1]["final_loss"]  # the seeds did differ
    assert {k: v for k, v in parallel.items() if k != "results"} == {k: v for k, v in alone.items() if k != "results"}
    summaries = [{k: v for k, v in saved["results"]["columns, batch 8"]["summary"].items() if k != "step_seconds"}
                 for saved in (parallel, alone)]
    assert summaries[0] == summaries[1]


def test_jobs_refuses_step_timing(tmp_path):
    with pytest.raises(FrozenbridgeError, match="--time-steps times each step alone on the machine"):
        sweep(tmp_path / "params.yaml", tmp_path, tmp_path / "c.json", "--time-steps", "4", "--jobs", "2")
    with pytest.raises(FrozenbridgeError, match="--jobs 0: give 1 or more"):
        sweep(tmp_path / "params.yaml", tmp_path, tmp_path / "c.json", "--jobs", "0")


def test_language_flag_runs_the_named_model_and_labels_its_rows(tiny_models, tmp_path):
    """--language replaces params.yaml's language model for every run; the rows are saved as '<label>: <setting>'
    with the model's name (the mode a row's runs are reused under)."""
    from frozenbridge.shapes.sweeps.converge_settings import model_label

    params, data = write_study(tmp_path, tmp_path / "not-a-model")  # params.yaml names nothing that loads
    saved = sweep(params, data, tmp_path / "m.json", "--seeds", "0", "--threads", "1",
                  "--language", str(tiny_models["qwen2"]), "--label", "tiny qwen2")
    entry = saved["results"]["tiny qwen2: columns, batch 8"]
    assert entry["language"] == str(tiny_models["qwen2"]) and [r["seed"] for r in entry["runs"]] == [0]
    assert list(saved["results"]) == ["tiny qwen2: columns, batch 8"]
    assert model_label("/models/qwen2.5-coder-0.5b-instruct.gguf") == "qwen2.5-coder-0.5b-instruct"
    assert model_label(str(tiny_models["qwen2"])) == tiny_models["qwen2"].name
    assert model_label("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"  # a hub id as given


def test_model_table_gives_worst_and_median_seed_every_50_steps():
    from frozenbridge.shapes.report.tables import model_table

    stopped = {**run(0, [(50, 20), (100, 75)]), "steps_to_70": 100}  # reached 70% at 100 and stopped
    slow = run(1, [(50, 0), (100, 10), (150, 55), (200, 65)])
    fast = run(2, [(50, 30), (100, 60), (150, 80), (200, 90)])
    entry = {"steps": 200, "step_seconds": 2.0, "runs": [stopped, slow, fast],
             "summary": summarize([stopped, slow, fast], 200)}
    rows = model_table({"items": 60, "results": {"tiny: default": entry}})
    row = rows[-1].split(" | ")
    assert row[0] == "| tiny: default" and row[1] == "3"
    # worst (median) every 50 steps; the seed stopped at 100 keeps its 75
    assert row[2:6] == ["0.0 (20.0)", "10.0 (60.0)", "55.0 (75.0)", "65.0 (75.0)"]
    assert row[6] == "150 (300)"  # worst seed to 50%: step 150, 150 x 2.0 s
    assert row[7] == "never (of 200)" and row[8] == "2.00 |"
    # beside a row of 400 steps, this row's seeds say nothing past its own 200, even the one that reached 70%
    longer = {**entry, "steps": 400, "runs": [{**fast, "curve": fast["curve"] + [(400, 95)]}]}
    rows = model_table({"items": 60, "results": {"tiny: default": entry, "tiny: longer": longer}})
    assert rows[-2].split(" | ")[2:10] == ["0.0 (20.0)", "10.0 (60.0)", "55.0 (75.0)", "65.0 (75.0)",
                                           "—", "—", "—", "—"]
