"""The analyses of trained runs: paired statistics, wrong-answer sources, the frozen model's text."""

from __future__ import annotations

import pytest

from frozenbridge.shapes.summary.paired import (compare, median_interval, paired, questions_right, sign_test_p,
                                               statistics_of, supported)
from frozenbridge.shapes.summary.wrong_answers import classify, common_colors, wrong_answers


def task(right: float, n: int = 60) -> dict:
    return {"right": right, "n": n}


def run(**tasks) -> dict:
    return {"tests": {"seen": {k: task(v) for k, v in tasks.items()},
                      "heldout": {k: task(v) for k, v in tasks.items()}}}


def test_paired_counts_and_median_difference_on_a_hand_made_table():
    # five replicates, binding right (of 60): qa 20, 30, 45, 50, 10 ; caption_qa 40, 30, 40, 55, 35
    qa = [task(round(100 * q / 60, 2)) for q in (20, 30, 45, 50, 10)]
    cq = [task(round(100 * q / 60, 2)) for q in (40, 30, 40, 55, 35)]
    assert [questions_right(t) for t in qa] == [20, 30, 45, 50, 10]  # percentages round-trip to counts
    cell = compare(qa, cq)
    assert cell["differences"] == [-20, 0, 5, -5, -25]
    assert (cell["ahead"], cell["tied"], cell["behind"]) == (1, 1, 3)
    assert cell["median_difference"] == -5 and cell["items"] == 60 and cell["replicates"] == 5
    assert compare(cq, qa)["median_difference"] == 5  # the order of the pair is the sign


def test_paired_covers_only_pairs_that_ran_in_the_same_replicates():
    scores = {"qa": [run(binding=50), run(binding=60)], "caption_qa": [run(binding=70), run(binding=60)],
              "caption": [run(caption=80), run(caption=90)]}
    out = paired(scores)
    assert list(out) == ["qa vs caption_qa"]
    assert out["qa vs caption_qa"]["heldout"]["binding"]["differences"] == [-12, 0]
    with pytest.raises(ValueError):
        compare([task(50)], [task(50), task(60)])



@pytest.mark.parametrize(("ahead", "behind", "p"), [(5, 0, 0.0625), (0, 5, 0.0625), (4, 1, 0.375), (3, 0, 0.25),
                                                    (0, 0, 1.0), (1, 1, 1.0), (9, 1, 0.0215)])
def test_sign_test_is_exact_and_two_sided(ahead, behind, p):
    assert sign_test_p(ahead, behind) == p  # (9, 1): 2 * 11 / 1024 = 0.021484


def test_sign_test_drops_ties():
    cell = statistics_of([4, 2, 0, 7, 0])  # 3 ahead, 0 behind, 2 tied: 2 * (1/2)^3
    assert (cell["ahead"], cell["tied"], cell["behind"], cell["sign_test_p"]) == (3, 2, 0, 0.25)
    assert statistics_of([0, 0, 0])["sign_test_p"] == 1.0


def test_interval_of_five_is_min_to_max_at_its_real_coverage():
    iv = median_interval([7, -2, 3, 11, 5])
    assert (iv["low"], iv["high"], iv["coverage"]) == (-2, 11, 0.9375)  # 1 - 2/32: five cannot reach 95%
    assert iv["method"] == "exact order-statistic interval (binomial), distribution-free"
    assert median_interval([3, -1])["coverage"] == 0.5 and median_interval([4])["coverage"] == 0.0


def test_interval_of_nine_drops_one_from_each_end():
    # P(Binomial(9, 1/2) <= 1) = 10/512: [d_(2), d_(8)] covers 1 - 20/512 = 0.9609; [d_(3), d_(7)] only 1 - 92/512
    iv = median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5])
    assert (iv["low"], iv["high"], iv["coverage"]) == (2, 8, 0.9609)
    six = median_interval([6, 1, 5, 2, 4, 3])  # six reach 95% with [min, max]: 1 - 2/64
    assert (six["low"], six["high"], six["coverage"]) == (1, 6, 0.9688)


def test_supported_only_by_an_interval_of_90_percent_clear_of_zero():
    assert supported(median_interval([1, 2, 3, 4, 5, 6, 7, 8, 9])) == "first"
    assert supported(median_interval([-1, -2, -3, -4, -5, -6, -7, -8, -9])) == "second"
    straddles = median_interval([5, -1, 4, 0, 6, -2, 7, 1, 8])  # ahead in 6 of 9, yet [-1, 7]
    assert (straddles["low"], straddles["high"], supported(straddles)) == (-1, 7, None)
    assert supported(median_interval([0, 0, 1, 2, 3, 4, 5, 6, 7])) is None  # [0, 6]: zero on the edge is inside
    assert supported(median_interval([1, 2, 3, 4, 5])) == "first"  # all five ahead: [1, 5] at 93.75%
    assert supported(median_interval([1, 2, 3, 4])) is None  # all four ahead, but [1, 4] covers only 87.5%
    assert supported({"low": -3, "high": 4, "coverage": 0.99}) is None
    cell = compare([task(100 * q / 60) for q in (30, 31, 32, 33, 34, 35)], [task(100 * q / 60) for q in (20,) * 6])
    assert cell["interval"]["low"] == 10 and cell["supported"] == "first" and cell["sign_test_p"] == 0.0312

TRAIN = {"red": {"circle": 10, "square": 9, "triangle": 0}, "green": {"circle": 0, "square": 8, "triangle": 9},
         "blue": {"circle": 7, "square": 0, "triangle": 10}, "yellow": {"circle": 5, "square": 5, "triangle": 5},
         "purple": {"circle": 4, "square": 4, "triangle": 4}, "orange": {"circle": 3, "square": 3, "triangle": 3}}


def shape(color: str, kind: str, cx: float, cy: float = 100.0) -> dict:
    return {"color": color, "kind": kind, "cx": cx, "cy": cy, "size": 40.0}


SCENE = [shape("green", "circle", 30), shape("red", "triangle", 100), shape("yellow", "square", 130),
         shape("blue", "circle", 200)]  # left to right; a held-out red triangle


def item(said: str, prompt: str = "Question: What color is the triangle? Answer:", target: str = "red") -> dict:
    return {"picture": 0, "prompt": prompt, "target": target, "right": said}


def test_common_colors_per_kind():
    assert common_colors(TRAIN) == {"circle": ("red", "blue"), "square": ("red", "green"),
                                    "triangle": ("blue", "green")}


def test_wrong_color_sources_and_their_chances():
    common = common_colors(TRAIN)
    assert classify("binding", item("red"), SCENE, common) is None  # right answers are not counted
    yellow = classify("binding", item("yellow"), SCENE, common)  # the nearest shape (the square at 130)
    assert yellow["in_picture"] == 1 and yellow["nearest"] == 1 and yellow["common"] == 0
    assert yellow["nearest_chance"] == pytest.approx(1 / 3) and yellow["common_chance"] == pytest.approx(2 / 3)
    green = classify("binding", item("green"), SCENE, common)  # another shape's color, common for triangles
    assert green["nearest"] == 0 and green["common"] == 1
    purple = classify("binding", item("purple"), SCENE, common)
    assert purple["not_in_picture"] == 1 and purple["in_picture"] == 0 and purple["nearest_chance"] == 0
    assert classify("binding", item("two"), SCENE, common)["not_a_color"] == 1
    leftmost = classify("leftmost", item("red", "Question: What color is the leftmost shape? Answer:", "green"),
                        SCENE, common)  # the asked shape is the green circle; red is the triangle beside it
    assert leftmost["nearest"] == 1 and leftmost["common"] == 1  # red is a common circle color


def test_wrong_answers_sum_over_replicates():
    runs = {"qa": [{"binding": [item("yellow"), item("red")], "leftmost": []},
                   {"binding": [item("purple")], "leftmost": []}]}
    out = wrong_answers(runs, [SCENE], TRAIN)["qa"]
    assert out["binding"]["wrong"] == 2 and out["binding"]["in_picture"] == 1
    assert out["binding"]["not_in_picture"] == 1 and out["binding"]["replicates"] == 2
    assert out["leftmost"]["wrong"] == 0
    # red is the right answer; yellow is on another shape of replicate 0's picture, purple is in no shape of it
    assert out["binding"]["by_replicate"] == [{"wrong": 1, "not_in_picture": 0}, {"wrong": 1, "not_in_picture": 1}]


def trained_runs(tiny_models, tmp_path, recipes, perturb=None):
    """A stage-1 run and `recipes` trained on the tiny Qwen2 model; `perturb(lm)` runs after the first training step
    of each recipe (a deliberate change to the language model's weights)."""
    import torch
    from test_train import tiny_split

    from frozenbridge.core.backbones import load_language
    from frozenbridge.shapes.params import Params, ShapesParams, Stage1Until, TrainParams
    from frozenbridge.shapes.paths import STAGE1, model_dir
    from frozenbridge.shapes.training import run as training

    cpu = torch.device("cpu")
    data = tiny_split()
    p = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                     batch_size=4, stage1_steps=2, stage2_steps=2, lora_lr=1e-2)))
    name = str(tiny_models["qwen2"])
    training.train(p, None, 0, data, load_language(name), cpu, False, model_dir(tmp_path, STAGE1, 0))
    for recipe in recipes:
        lm = load_language(name)
        steps = training.train_steps

        def train_steps(*args, steps=steps, lm=lm, **kwargs):
            steps(*args, **kwargs)
            if perturb is not None:
                perturb(lm)
        training.train_steps = train_steps
        try:
            training.train(p, recipe, 0, data, lm, cpu, False, model_dir(tmp_path, recipe, 0),
                           stage1_dir=model_dir(tmp_path, STAGE1, 0))
        finally:
            training.train_steps = steps
    return name, cpu


def test_frozen_runs_keep_the_base_models_text_exactly(tiny_models, tmp_path):
    """The check reads what each run recorded of the model it trained with: frozen runs keep the base model's
    weights digest and its passage perplexity exactly (equality, not closeness); the LoRA run's moves."""
    from frozenbridge.shapes.evaluation.text_check import text_check

    name, cpu = trained_runs(tiny_models, tmp_path, ("caption", "qa", "caption_qa_lora"))
    out = text_check(name, ("caption", "qa", "caption_qa_lora"), (0,), tmp_path, cpu, False)
    assert out["passage_tokens"] > 100
    for recipe in ("caption", "qa"):
        r = out["runs"][recipe]["0"]
        assert r["equals_base"] is True and r["weights_unchanged"] is True and r["started_from_base"] is True
        assert r["perplexity"] == r["rebuilt_perplexity"] == out["base"]
    lora = out["runs"]["caption_qa_lora"]["0"]
    assert lora["lora"] is True and lora["started_from_base"] is True
    assert lora["equals_base"] is False and lora["weights_unchanged"] is False
    assert lora["perplexity"] != out["base"] and lora["rebuilt_perplexity"] == pytest.approx(lora["perplexity"], 1e-4)


def test_a_run_that_changed_its_language_model_fails_the_text_check(tiny_models, tmp_path):
    """A frozen recipe whose language model weight is nudged during training (one entry of one layer, by 1e-3)
    fails the check, although the run rebuilt from its folder (which reloads the base model) reads like the base."""
    import torch

    from frozenbridge.shapes.evaluation.text_check import text_check

    def perturb(lm):
        with torch.no_grad():
            lm.model.model.layers[0].mlp.down_proj.weight[0, 0] += 1e-3

    name, cpu = trained_runs(tiny_models, tmp_path, ("qa",), perturb)
    r = text_check(name, ("qa",), (0,), tmp_path, cpu, False)["runs"]["qa"]["0"]
    assert r["weights_unchanged"] is False and r["equals_base"] is False and r["started_from_base"] is True
    assert r["rebuilt_perplexity"] == text_check(name, ("qa",), (0,), tmp_path, cpu, False)["base"]


def test_cells_and_merged_tokens_under_a_shape():
    from frozenbridge.shapes.evaluation.probes import cells_under, tokens_under

    # a 4 x 4 grid over 64 px (16 px cells, centers at 8, 24, 40, 56); a 30 px square centred at (24, 40)
    cells = cells_under({"cx": 24.0, "cy": 40.0, "size": 30.0}, (4, 4), 64)
    assert cells == [2 * 4 + 1]  # only the cell centred at (24, 40) lies within 15 px on both axes
    big = cells_under({"cx": 32.0, "cy": 32.0, "size": 40.0}, (4, 4), 64)
    assert big == [5, 6, 9, 10]
    tiny = cells_under({"cx": 3.0, "cy": 60.0, "size": 2.0}, (4, 4), 64)
    assert tiny == [12]  # no cell centre inside: the cell holding the centre
    # 2 x 2 merge: blocks (0,0) (0,1) (1,0) (1,1); cell 9 (row 2, col 1) is in block (1, 0)
    assert tokens_under([9], (4, 4), 2, "rows") == [2] and tokens_under([9], (4, 4), 2, "columns") == [1]
    assert tokens_under([5, 6, 9, 10], (4, 4), 2, "columns") == [0, 2, 1, 3]


def test_a_probe_reads_a_planted_color_and_ignores_noise():
    import numpy as np
    import torch

    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.shapes.evaluation.probes import place_vectors, probe_place

    rng = np.random.default_rng(0)
    colors, kinds = ["red", "green", "blue", "yellow", "purple", "orange"], ["circle", "square", "triangle"]

    def make(n):
        scenes, feats = [], torch.randn(n, 16, 12, generator=torch.Generator().manual_seed(n)) * 0.1
        for i in range(n):
            c, k = rng.integers(6), rng.integers(3)
            scenes.append([{"color": colors[c], "kind": kinds[k], "cx": 24.0, "cy": 24.0, "size": 30.0}])
            feats[i, 5, c] += 3.0  # the color is written into the cell under the shape; the kind is not
        return feats, scenes

    (ftr, strn), (fte, ste) = make(120), make(60)
    out = probe_place((place_vectors(ftr, strn, (4, 4), 64), strn),
                      {"seen": (place_vectors(fte, ste, (4, 4), 64), ste)})
    assert out["color"]["seen"] == 100.0 and out["kind"]["seen"] < 60
    torch.manual_seed(0)
    connector = MergedPatchMLP([4, 4, 12], 8, merge=2, order="columns")
    merged = place_vectors(ftr, strn, (4, 4), 64, connector)
    assert merged.shape == (120, 8)


def test_probes_refuse_pooled_features():
    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.shapes.evaluation.probes import check_patches

    with pytest.raises(FrozenbridgeError, match="probes need a grid of patch vectors"):
        check_patches({"grid": None, "features": "pooled"})


def test_two_picture_pairs_positions_and_the_question(tiny_models):
    import torch

    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.model import VLM
    from frozenbridge.core.backbones import load_language
    from frozenbridge.shapes.evaluation.two_pictures import ask, picture_pairs, positions

    tri = [shape("red", "triangle", 50)]
    none = [shape("blue", "circle", 50)]
    scenes = [tri, none, none, tri, tri, none]
    pairs = picture_pairs(scenes, 3)
    assert pairs == [(0, 1), (2, 3), (4, 5)]  # exactly one triangle per pair, the triangle first every other pair
    lm = load_language(str(tiny_models["qwen2"]))
    torch.manual_seed(0)
    vlm = VLM(lm, MergedPatchMLP([4, 4, 32], lm.width, merge=2), torch.device("cpu"), False)
    pos = positions(vlm)
    assert pos["text only"]["from_pictures"] == 0 and pos["one picture and text"]["from_pictures"] == 4
    assert pos["two pictures and text"]["from_pictures"] == 8
    assert pos["two pictures and text"]["positions"] > pos["one picture and text"]["positions"] + 4
    out = ask(vlm, torch.randn(6, 16, 32), scenes, 3, 4, 3)
    assert out["pairs"] == 3 and sum(out["replies"].values()) == 6  # every reply counted, in both orders

    class Scripted:  # a model that answers by position: "the first" whatever it is shown
        def generate(self, items, feats, max_new):
            return ["the first"] * len(items)
    # the triangle is first in pairs 0 and 2 as given, in pair 1 swapped: right 2 of 3, then 1 of 3, never both
    assert ask(Scripted(), torch.randn(6, 16, 32), scenes, 3, 2, 3) == {
        "pairs": 3, "given": 66.67, "swapped": 33.33, "both": 0.0, "replies": {"the first": 6}}


def test_kv_cache_bytes_from_a_config():
    from types import SimpleNamespace

    from frozenbridge.bridge.token_cost import kv_bytes_per_position, picture_cost

    qwen05 = SimpleNamespace(num_attention_heads=14, num_key_value_heads=2, hidden_size=896, num_hidden_layers=24)
    assert kv_bytes_per_position(qwen05) == 12_288  # 2 x 24 layers x 2 heads x 64 dims x 2 bytes (reference §8)
    cost = picture_cost(qwen05, (14, 14), 2, 224)
    assert [(r["patches"], r["merged"]) for r in cost["pictures"]] == [(196, 49), (784, 196)]
    assert cost["pictures"][0]["patches_kv_bytes"] == 196 * 12_288


def test_size_matched_connector_has_the_merged_parameter_count():
    from frozenbridge.shapes.sweeps.capacity import connector_params, matched_hidden

    shape = [14, 14, 112]
    merged = connector_params(shape, 576, 2, None, True)
    wide = matched_hidden(shape, 576, 2, True)
    matched = connector_params(shape, 576, 1, wide, True)
    assert abs(matched - merged) / merged < 0.005 and connector_params(shape, 576, 1, None, True) < merged


def test_receipts_on_a_tiny_vit_and_a_causal_lm(tiny_models, tmp_path):
    import torch

    from frozenbridge.bridge.receipts import conv_equals_matmul, encoder_first_moves, language_first_moves, patch_conv
    from frozenbridge.core.backbones import load_language, load_vision
    from frozenbridge.testing.tiny_vision import build_vit

    build_vit(tmp_path / "vit")
    enc = load_vision(str(tmp_path / "vit"), "patches", None)
    pixels = torch.rand(1, 3, 32, 32)
    conv = patch_conv(enc.model)
    assert conv.kernel_size == (8, 8) and conv_equals_matmul(conv, pixels) < 1e-5
    assert encoder_first_moves(enc.forward, pixels, 8) > 1e-4  # attention reaches the first patch
    lm = load_language(str(tiny_models["qwen2"]))
    embeds = lm.embed(torch.tensor([[5, 6, 7, 8, 9]]))
    assert language_first_moves(lm.model, embeds) == 0.0


@pytest.mark.parametrize("stage", ["analyze", "text", "probe"])
def test_a_missing_run_is_one_clear_line(tmp_path, stage):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    args = [sys.executable, f"stages/shapes/{stage}.py", "--runs", str(tmp_path / "runs"),
            "--data", str(tmp_path / "data")]
    proc = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=300)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert last.startswith("error: ") and "not found; run `dvc repro" in last, last
