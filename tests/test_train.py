"""Training touches only the connector (and LoRA weights in the LoRA recipe); scoring arithmetic is exact."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.lora import load_lora
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.saved_run import load_connector
from frozenbridge.bridge.sequence import Item
from frozenbridge.core.backbones import load_language
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.core.controls import wrong_pictures
from frozenbridge.shapes.evaluation.scoring import eval_items, evaluate_split, exact_match, gap, percent
from frozenbridge.shapes.params import (DataParams, EvaluateParams, Params, ShapesParams, SplitSizes, Stage1Until,
                                        TrainParams)
from frozenbridge.shapes.training.recipes import RECIPES
from frozenbridge.shapes.training.run import run_seeds, train
from frozenbridge.shapes.training.split_data import SplitData, question_batches

CPU = torch.device("cpu")


def tiny_split(n: int = 12, seed: int = 0) -> SplitData:
    cfg = DataParams(image_size=64, sizes=SplitSizes(train=n))
    table = generate_split("train", n, cfg, split_seeds(seed)["train"])
    feats = torch.randn(n, 16, 32, generator=torch.Generator().manual_seed(seed)).half()
    meta = {"output_shape": [4, 4, 32], "encoder": "tiny", "revision": "x", "features": "patches", "layer": None,
            "grid": [4, 4], "width": 32, "image_size": 64}
    return SplitData(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                     table.column("shapes").to_pylist(), feats, meta)


def params(**train) -> Params:
    return Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                        batch_size=4, stage1_steps=2, stage2_steps=2, mix_captions=2,
                                                        **train)))


@pytest.fixture()
def lm(tiny_models):
    return load_language(str(tiny_models["qwen2"]))


def snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k.replace(".base_layer", ""): v.detach().clone() for k, v in model.state_dict().items() if "lora_" not in k}


def test_language_model_bit_identical_after_training(lm, tmp_path):
    data, p = tiny_split(), params()
    before = snapshot(lm.model)
    train(p, None, 0, data, lm, CPU, False, tmp_path / "stage1")
    for recipe in ("caption_qa", "caption_qa_lora"):
        train(p, recipe, 0, data, lm, CPU, False, tmp_path / recipe, stage1_dir=tmp_path / "stage1")
    after = snapshot(lm.model)
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert (tmp_path / "caption_qa_lora" / "lora").is_dir() and not (tmp_path / "caption_qa" / "lora").exists()
    # the connector did move away from stage 1
    s1, s2 = load_connector(tmp_path / "stage1"), load_connector(tmp_path / "caption_qa")
    assert not torch.equal(s1.mlp[0].weight, s2.mlp[0].weight)


@pytest.mark.parametrize("with_lora", [False, True])
def test_gradients_reach_only_the_connector_and_lora(lm, with_lora):
    from frozenbridge.shapes.training.run import add_lora

    data, p = tiny_split(), params()
    if with_lora:
        add_lora(lm, p, run_seeds(0, 0)["init"])
    connector = MergedPatchMLP([4, 4, 32], lm.width, merge=2)
    vlm = VLM(lm, connector, CPU, bf16=False)
    vlm.loss(next(question_batches(data, np.random.SeedSequence(0), 4)), data.feats).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in connector.parameters())
    got_grad = {n for n, p in lm.model.named_parameters() if p.grad is not None}
    lora = {n for n, _ in lm.model.named_parameters() if "lora_" in n}
    assert got_grad == (lora if with_lora else set())
    if with_lora:
        assert got_grad and all(not p.requires_grad for n, p in lm.model.named_parameters() if "lora_" not in n)


def test_lora_adapter_round_trips(lm, tiny_models, tmp_path):
    data, p = tiny_split(), params()
    train(p, None, 0, data, lm, CPU, False, tmp_path / "stage1")
    train(p, "caption_qa_lora", 0, data, lm, CPU, False, tmp_path / "lora", stage1_dir=tmp_path / "stage1")
    fresh = load_language(str(tiny_models["qwen2"]))
    assert load_lora(fresh, tmp_path / "lora" / "lora") and any("lora_" in n for n, _ in fresh.model.named_parameters())
    assert not load_lora(fresh, tmp_path / "stage1" / "lora")


def test_a_saved_run_rebuilds_itself_from_its_directory_alone(lm, tiny_models, tmp_path):
    """load_run(dir) needs no params.yaml: config.json names the encoder, the language model and the connector's
    shape; the rebuilt model (LoRA included) writes what the trained one writes."""
    import json

    from frozenbridge.bridge.saved_run import load_run

    data, p = tiny_split(), params()
    train(p, None, 0, data, lm, CPU, False, tmp_path / "stage1")
    train(p, "caption_qa_lora", 0, data, lm, CPU, False, tmp_path / "lora", stage1_dir=tmp_path / "stage1")
    config = json.loads((tmp_path / "lora" / "config.json").read_text())
    assert config["encoder"] == {"name": "tiny", "revision": "x", "features": "patches", "layer": None,
                                 "grid": [4, 4], "width": 32, "image_size": 64}
    assert config["language"]["name"] == str(tiny_models["qwen2"]) and config["language"]["revision"]
    assert config["connector"]["feature_shape"] == [4, 4, 32] and config["lora"] == {"rank": 8, "alpha": 16}
    adapter = json.loads((tmp_path / "lora" / "lora" / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == config["language"]["name"]  # the params name, not a cache path
    modules = adapter["target_modules"]  # sorted: the same bytes whatever the process's string hashing
    assert len(modules) > 2 and modules == sorted(modules)
    run = load_run(tmp_path / "lora", CPU, False)
    assert run.model.lm is not lm and any("lora_" in n for n, _ in run.model.lm.model.named_parameters())
    items = [Item(i, "Caption:", "") for i in range(3)]
    fresh_lm = load_language(str(tiny_models["qwen2"]))
    from frozenbridge.bridge.lora import load_lora as attach_saved

    attach_saved(fresh_lm, tmp_path / "lora" / "lora")
    expected = VLM(fresh_lm, load_connector(tmp_path / "lora"), CPU, False).generate(items, data.feats, 6)
    assert run.model.generate(items, data.feats, 6) == expected
    stage1 = load_run(tmp_path / "stage1", CPU, False)
    assert json.loads((tmp_path / "stage1" / "config.json").read_text())["lora"] is None
    assert not any("lora_" in n for n, _ in stage1.model.lm.model.named_parameters())


def test_replicates_are_paired_across_recipes():
    data = tiny_split(20)
    seeds_a, seeds_b = run_seeds(0, 1), run_seeds(0, 1)
    a = question_batches(data, seeds_a["questions"], 4)
    b = question_batches(data, seeds_b["questions"], 4)
    assert [next(a) for _ in range(5)] == [next(b) for _ in range(5)]
    other = question_batches(data, run_seeds(0, 2)["questions"], 4)
    assert next(other) != next(question_batches(data, run_seeds(0, 1)["questions"], 4))
    assert RECIPES["qa"].phases[0].n_steps(TrainParams(stage1_steps=3, stage2_steps=4)) == 7


def test_learning_rate_schedule():
    from frozenbridge.core.schedule import lr_factor

    assert [lr_factor(s, 10, "constant", 0.0) for s in (0, 9)] == [1.0, 1.0]
    warm = [lr_factor(s, 100, "cosine", 0.1) for s in range(100)]
    assert warm[:10] == [pytest.approx((s + 1) / 11) for s in range(10)]  # linear warmup, never 0
    assert warm[10] == pytest.approx(1.0) and warm[-1] == pytest.approx(0.1, abs=0.01)
    assert all(a >= b for a, b in zip(warm[10:], warm[11:]))  # then a monotone decay to a tenth


def test_questions_after_captions_have_their_own_schedule():
    from frozenbridge.shapes.params import TrainParams
    from frozenbridge.shapes.training.recipes import RECIPES, STAGE1_PHASE

    p = TrainParams(stage1_schedule="constant", stage1_warmup=0.0, stage2_schedule="cosine", stage2_warmup=0.2)
    assert STAGE1_PHASE.schedule(p) == ("constant", 0.0)
    assert RECIPES["qa"].phases[0].schedule(p) == ("constant", 0.0)  # from a random connector, like stage 1
    for name in ("caption_qa", "caption_qa_lora", "caption_qa_mix"):
        assert RECIPES[name].phases[0].schedule(p) == ("cosine", 0.2)


def test_exact_match_gap_and_percent():
    assert exact_match("  a red square \n", "a red square") and not exact_match("a red square.", "a red square")
    assert not exact_match("Red", "red")
    assert percent(3, 8) == 37.5 and percent(0, 0) == 0.0
    assert gap({"right": 90.0, "blank": 10.0, "wrong": 35.0, "none": 20.0}) == 55.0
    assert gap({"right": 10.0, "blank": 30.0, "wrong": 0.0, "none": 0.0}) == -20.0


def test_wrong_picture_answers_are_scored_against_the_scene_shown():
    data = tiny_split(10)
    items = eval_items(data, 10)
    for task, rows in items.items():
        pictures = [it.picture for it in rows]
        for i, it in enumerate(rows):
            assert it.wrong != it.picture and it.wrong in pictures  # another item's picture of the same task
            if len(set(pictures)) == len(pictures):
                assert it.wrong == pictures[(i + len(rows) // 2) % len(rows)]
    for it in items["count"]:
        assert it.target_on_wrong == ["zero", "one", "two", "three", "four"][len(data.shapes[it.wrong])]
    for it in items["caption"]:
        assert it.target_on_wrong == data.captions[it.wrong]
    for it in items["binding"]:
        kind = it.prompt.split("the ")[1].split("?")[0]
        of_kind = [s for s in data.shapes[it.wrong] if s["kind"] == kind]
        assert it.target_on_wrong == (of_kind[0]["color"] if len(of_kind) == 1 else None)


def test_wrong_pictures_skip_an_items_own_picture():
    assert wrong_pictures([0, 1, 2, 3]) == [2, 3, 0, 1]
    assert wrong_pictures([5, 5, 6]) == [6, 6, 5]  # half the list away is the same picture: the next other one


def test_evaluation_generates_each_distinct_prompt_once_and_keeps_every_prediction(lm):
    data = tiny_split(12)
    vlm = VLM(lm, MergedPatchMLP([4, 4, 32], lm.width, merge=2), CPU, bf16=False)
    blank = torch.zeros(1, 16, 32, dtype=data.feats.dtype)
    calls = []
    generate = vlm.generate
    vlm.generate = lambda items, feats, n: (calls.extend((it.image, it.prompt) for it in items)
                                            or generate(items, feats, n))
    cfg = EvaluateParams(items=8, batch_size=5, caption_tokens=6, answer_tokens=3)
    scores, predictions = evaluate_split(vlm, data, blank, cfg, "test")
    assert len(calls) == len(set(calls))  # nothing generated twice
    items = eval_items(data, 8)
    for task, rows in items.items():
        assert len(predictions[task]) == len(rows) and scores[task]["n"] == len(rows)
        keys = {(it.picture, it.prompt) for it in rows} | {(it.wrong, it.prompt) for it in rows}
        assert keys <= set(calls)
    # the same predictions as generating every item and condition on its own, in one batch each
    for task, rows in items.items():
        n = cfg.caption_tokens if task == "caption" else cfg.answer_tokens
        alone = [generate([Item(it.wrong, it.prompt, "")], torch.cat([data.feats, blank]), n)[0] for it in rows[:3]]
        assert [p["wrong"] for p in predictions[task][:3]] == alone
