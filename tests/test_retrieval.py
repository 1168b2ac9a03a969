"""The retrieval study's parts: the contrastive loss, recall@K, the captions, the text cache, the towers, a run
that learns, and the params it refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.retrieval.data.text_cache import (VisionTextTower, has_text_tower, lm_batches, read_text_features,
                                                    write_text_features)
from frozenbridge.retrieval.data.texts import PHRASES, SceneTexts, scene_texts, texts_to_embed
from frozenbridge.retrieval.evaluation.recall import (chance_recall, match_ranks, recall_at, recall_relevant,
                                                      relevant_ranks)
from frozenbridge.retrieval.evaluation.scoring import chance, phrasing_top1, recall
from frozenbridge.retrieval.params import load_params
from frozenbridge.retrieval.training.contrastive import MAX_SCALE, Temperature, info_nce, similarity
from frozenbridge.retrieval.training.loop import Batches, train
from frozenbridge.retrieval.training.towers import FeatureTower, ImageProjection, ScratchTower
from frozenbridge.shapes.data.vocab import COLORS, KINDS


def test_a_perfect_pairing_scores_lower_loss_than_a_shuffled_one():
    torch.manual_seed(0)
    images = torch.randn(16, 8)
    texts = images + 0.05 * torch.randn(16, 8)  # each text near its own image
    shuffled = texts[torch.randperm(16)]
    scale = Temperature()()
    assert info_nce(images, texts, scale) < info_nce(images, shuffled, scale) - 1.0
    assert info_nce(images, texts, scale) < np.log(16)  # better than chance (uniform logits give log n)


def test_the_loss_is_symmetric_and_the_temperature_learns_within_its_cap():
    torch.manual_seed(1)
    a, b = torch.randn(8, 4), torch.randn(8, 4)
    assert torch.allclose(info_nce(a, b, 10.0), info_nce(b, a, 10.0))
    t = Temperature(0.07)
    assert float(t().detach()) == pytest.approx(1 / 0.07, rel=1e-5)
    with torch.no_grad():
        t.log_scale.fill_(10.0)
    assert float(t().detach()) == pytest.approx(MAX_SCALE)
    loss = info_nce(a, b, t())
    loss.backward()
    assert t.log_scale.grad is not None


def test_recall_on_a_hand_made_similarity_matrix():
    s = np.array([[0.9, 0.1, 0.0, 0.2],   # image 0: its text first
                  [0.8, 0.5, 0.1, 0.0],   # image 1: text 0 beats its own -> second
                  [0.1, 0.2, 0.3, 0.4],   # image 2: text 3 beats it -> second
                  [0.7, 0.6, 0.5, 0.1]])  # image 3: its text last -> fourth
    assert match_ranks(s).tolist() == [0, 1, 1, 3]
    r = recall_at(s, ks=(1, 2))
    assert r["image_to_text"] == {"R@1": 0.25, "R@2": 0.75}
    # texts as queries: text 1 and text 2 are beaten by image 3; text 3 by images 0 and 2
    assert match_ranks(s.T).tolist() == [0, 1, 1, 2]
    assert r["text_to_image"] == {"R@1": 0.25, "R@2": 0.75}


def test_ties_never_help_a_collapsed_model():
    assert recall_at(np.ones((5, 5)), ks=(1, 5)) == {"image_to_text": {"R@1": 0.0, "R@5": 1.0},
                                                     "text_to_image": {"R@1": 0.0, "R@5": 1.0}}
    with pytest.raises(ValueError, match="square"):
        recall_at(np.ones((2, 3)))


def test_similarity_is_cosine():
    a = torch.tensor([[3.0, 0.0], [0.0, 2.0]])
    assert torch.allclose(similarity(a, a), torch.eye(2))


def test_with_several_right_texts_the_loss_counts_them_all_and_square_masks_agree():
    torch.manual_seed(2)
    images, texts = torch.randn(4, 6), torch.randn(4, 6)
    eye = torch.eye(4, dtype=torch.bool)
    assert torch.allclose(info_nce(images, texts, 5.0, eye), info_nce(images, texts, 5.0))
    # a text that is right for two pictures: pulling it toward both is not punished as a negative
    texts2 = torch.cat([texts, images[:1] + images[1:2]])
    pos = torch.zeros(4, 5, dtype=torch.bool)
    pos[torch.arange(4), torch.arange(4)] = True
    pos[0, 4] = pos[1, 4] = True
    wrong = pos.clone()
    wrong[0, 4] = wrong[1, 4] = False
    wrong[2, 4] = True
    assert info_nce(images, texts2, 10.0, pos) < info_nce(images, texts2, 10.0, wrong)
    with pytest.raises(ValueError, match="positive"):
        info_nce(images, texts, 5.0, torch.zeros(4, 4, dtype=torch.bool))


def test_recall_with_several_right_candidates_and_its_chance_level():
    s = np.array([[0.9, 0.8, 0.1],    # right: 1 -> text 0 (wrong) beats it: rank 1
                  [0.2, 0.3, 0.4],    # right: 0 and 2 -> text 2 is first: rank 0
                  [0.5, 0.5, 0.1]])   # right: 1 -> tie with wrong text 0 counts against: rank 1
    rel = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
    assert relevant_ranks(s, rel).tolist() == [1, 0, 1]
    assert recall_relevant(s, rel, ks=(1, 2)) == {"R@1": pytest.approx(1 / 3, abs=1e-6), "R@2": 1.0}
    # a square identity relevance is the matched-pair case
    m = np.random.default_rng(0).random((6, 6))
    assert recall_relevant(m, np.eye(6, dtype=bool)) == recall_at(m)["image_to_text"]
    # chance: one right of 3 -> 1/3 at K=1; two right of 3 -> 2/3; K = 3 always hits
    assert chance_recall(rel, ks=(1, 3)) == {"R@1": pytest.approx((1 / 3 + 2 / 3 + 1 / 3) / 3, abs=1e-6), "R@3": 1.0}
    with pytest.raises(ValueError, match="right candidate"):
        recall_relevant(s, np.zeros((3, 3), dtype=bool))


HELD_OUT = (("red", "triangle"),)


def _scene(*pairs: str) -> list[dict]:
    return [{"color": p.split()[0], "kind": p.split()[1], "cx": 10.0 * i, "cy": 5.0, "size": 4.0}
            for i, p in enumerate(pairs)]


def test_captions_long_reversed_and_short_with_held_out_pairs_preferred():
    scenes = [_scene("blue circle", "red triangle", "green square"), _scene("orange square", "purple circle")]
    t = scene_texts(scenes, "test_heldout", 0, HELD_OUT)
    assert t.long[0] == "a blue circle, a red triangle and a green square"
    assert t.reversed[0] == "a green square, a red triangle and a blue circle"
    assert t.short[0] == "a red triangle"  # the held-out pair, where the picture has one
    assert t.short[1] in ("an orange square", "a purple circle")
    assert t.pairs[1] == frozenset({("orange", "square"), ("purple", "circle")})
    assert len(PHRASES) == len(COLORS) * len(KINDS)
    texts = texts_to_embed(t, {"heldout": t})
    assert set(PHRASES) <= set(texts) and t.reversed[0] in texts and texts == sorted(set(texts))
    assert scene_texts(scenes, "test_heldout", 0, HELD_OUT) == t  # the same queries every time


def test_the_text_cache_round_trips_and_refuses_another_pooling(tiny_models, tmp_path):
    from frozenbridge.core.backbones import load_language

    lm = load_language(str(tiny_models["qwen2"]))
    texts = ["a red circle", "a blue square and a green triangle", "a purple circle, a red square and an orange "
             "triangle"]
    out = {}
    for pool in ("mean", "last"):
        meta = {"encoder": lm.name, "revision": lm.revision, "features": f"text-{pool}", "layer": None,
                "width": lm.width}
        write_text_features(tmp_path / f"{pool}.parquet", lm_batches(lm, texts, pool, 2, torch.device("cpu"), False),
                            len(texts), meta, "test")
        out[pool] = read_text_features(tmp_path / f"{pool}.parquet", lm.name, f"text-{pool}")
    mean = out["mean"]
    assert mean.texts == texts and mean.feats.shape == (3, lm.width) and mean.meta["texts"] == 3
    assert [len(t) for t in mean.tokens] == [len(lm.tokenizer(t, add_special_tokens=False).input_ids) for t in texts]
    assert not torch.allclose(mean.feats, out["last"].feats)
    # the mean over a caption's tokens does not depend on the padding its batch-mates forced on it
    alone = next(lm_batches(lm, texts[:1], "mean", 1, torch.device("cpu"), False))[1][:, 0]
    assert torch.allclose(alone, mean.feats[:1], atol=1e-5)
    assert mean.index(texts[::-1]).tolist() == [2, 1, 0]
    with pytest.raises(FrozenbridgeError, match="no embedding of 'a red square'.*dvc repro retrieval_embed"):
        mean.index(["a red square"])
    with pytest.raises(FrozenbridgeError, match="features = 'text-mean', but params.yaml asks for 'text-last'"):
        read_text_features(tmp_path / "mean.parquet", lm.name, "text-last")


@pytest.mark.parametrize("family, width", [("clip", 24), ("siglip", 32)])
def test_the_vision_models_own_text_tower_embeds_captions(tiny_models, family, width):
    tower = VisionTextTower(str(tiny_models[family]))
    ids, feats, cols = next(tower.batches(["a red circle", "a blue square and a green triangle"], 8,
                                          torch.device("cpu")))
    assert feats.shape == (2, 1, width) and cols["text"][0] == "a red circle"
    assert not torch.allclose(feats[0], feats[1])


def test_a_model_without_a_text_tower_is_refused(tiny_models):
    assert has_text_tower(str(tiny_models["clip"])) and has_text_tower(str(tiny_models["siglip"]))
    assert not has_text_tower("efficientnet-lite0") and not has_text_tower(str(tiny_models["qwen2"]))
    with pytest.raises(FrozenbridgeError, match="without a text tower; name a CLIP or SigLIP model"):
        VisionTextTower(str(tiny_models["qwen2"]))


def _toy_study(n: int, seed: int):
    """Pictures as the sum of their shapes' random codes plus noise; texts as bags of words (no models)."""
    rng = np.random.default_rng(seed)
    scenes = []
    for _ in range(n):
        k = int(rng.integers(2, 4))
        picked = rng.choice(len(PHRASES), size=k, replace=False)
        scenes.append(_scene(*(PHRASES[i].split(" ", 1)[1] for i in picked)))
    return scenes


def test_a_run_learns_to_retrieve_far_above_chance():
    torch.manual_seed(0)
    codes = {p: torch.randn(16) for p in PHRASES}
    train_scenes, test_scenes = _toy_study(300, 0), _toy_study(40, 1)
    train_t = scene_texts(train_scenes, "train", 0, ())
    test_t = scene_texts(test_scenes, "test_seen", 0, ())
    texts = texts_to_embed(train_t, {"seen": test_t})
    words = sorted({w for t in texts for w in t.replace(",", "").split()})
    bags = torch.stack([torch.tensor([float(w in t.replace(",", "").split()) for w in words]) for t in texts])

    def pictures(t):
        return torch.stack([sum(codes[PHRASES[i]] for i in range(len(PHRASES))
                                if (PHRASES[i].split()[-2], PHRASES[i].split()[-1]) in pairs)
                            for pairs in t.pairs]) + 0.05 * torch.randn(len(t.pairs), 16)

    rows = {t: i for i, t in enumerate(texts)}
    long_rows = torch.tensor([rows[t] for t in train_t.long])
    phrase_rows = torch.tensor([rows[t] for t in PHRASES])
    train_vec, test_vec = pictures(train_t), pictures(test_t)
    tower = FeatureTower(bags, torch.arange(len(texts)), 32, 64)
    image = ImageProjection(train_vec, 32)

    class Cfg:
        epochs, batch_size, lr, weight_decay, temperature = 30, 64, 3e-3, 0.0, 0.07

    def embed(ts):
        return tower(torch.tensor([rows[t] for t in ts]))

    with torch.no_grad():
        before = recall(image(test_vec), test_t, embed)
    temperature, history = train(tower, image, train_vec, Batches(train_t, long_rows, phrase_rows), Cfg,
                                 np.random.default_rng(0), "toy")
    with torch.no_grad():
        after = recall(image(test_vec), test_t, embed)
    assert history[-1]["loss"] < history[0]["loss"]
    floor = chance(test_t)["long"]["image_to_text"]["R@1"]
    assert after["long"]["image_to_text"]["R@1"] > max(5 * floor, before["long"]["image_to_text"]["R@1"] + 0.2)
    assert after["short"]["image_to_text"]["R@1"] > chance(test_t)["short"]["image_to_text"]["R@1"] + 0.3


def test_phrasing_on_hand_made_vectors_counts_both_directions_and_same_captions_as_one_scene():
    """Long caption i against reversed caption j, cosine: a tie with another scene's phrasing counts against, one
    with a scene of the same long caption does not; the score is the mean of both directions."""
    vec = {"l0": [1, 0, 0], "l1": [0.8, 0.6, 0], "l2": [0, 0, 1],
           "r0": [1, 0, 0], "r1": [0, 1, 0], "r2": [0, 0, 1], "r3": [1, 0, 0]}
    texts = SceneTexts(long=["l0", "l1", "l2", "l0"], reversed=["r0", "r1", "r2", "r3"], pairs=[frozenset()] * 4,
                       short=[""] * 4)

    def embed(ts):
        return torch.tensor([vec[t] for t in ts], dtype=torch.float32)

    # long -> reversed: l0 ties r0 and r3, both its own (same caption); l1 finds r0 (0.8) before r1 (0.6): 3 of 4
    # reversed -> long: r0 and r3 find l0 (twice, both right), r1 finds l1 (0.6 > 0), r2 finds l2: 4 of 4
    assert phrasing_top1(texts, embed) == pytest.approx((3 / 4 + 1) / 2)
    apart = SceneTexts(long=["l0", "l1", "l2", "l3"], reversed=texts.reversed, pairs=texts.pairs, short=texts.short)
    vec["l3"] = vec["l0"]  # the same vector under another caption: now the r0/r3 ties count against
    assert phrasing_top1(apart, embed) == pytest.approx((1 / 4 + 2 / 4) / 2)


def test_the_scratch_tower_reads_tokens_not_vectors():
    tower = ScratchTower([[5, 9, 7], [9, 5], [7]], dim=8, width=16, layers=1, heads=2)
    assert tower.ids.tolist() == [[1, 3, 2], [3, 1, 0], [2, 0, 0]]  # a compact vocabulary, 0 = padding
    out = tower(torch.tensor([0, 1, 2]))
    assert out.shape == (3, 8)
    padded = tower(torch.tensor([1]))
    assert torch.allclose(padded, out[1:2], atol=1e-6)  # padding never leaks into a caption's vector


def test_retrieval_params_refuse_what_cannot_run(tmp_path):
    def load(raw):
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(raw))
        return load_params(path)

    assert load({}).retrieval.towers == ("adaptor", "linear", "scratch")
    with pytest.raises(FrozenbridgeError, match="retrieval.towers = .* expected towers from \\[adaptor, linear, "
                                                "scratch\\]: vision_text .* 'efficientnet-lite0' has none"):
        load({"retrieval": {"towers": ["adaptor", "vision_text"]}})
    assert load({"vision": {"name": "openai/clip-vit-base-patch32"},
                 "retrieval": {"towers": ["vision_text"]}}).retrieval.towers == ("vision_text",)
    with pytest.raises(FrozenbridgeError, match="retrieval.towers\\[0\\] = 'clip' is not allowed"):
        load({"retrieval": {"towers": ["clip"]}})
    with pytest.raises(FrozenbridgeError, match="retrieval.scratch.heads = 3 is not allowed; expected a divisor"):
        load({"retrieval": {"scratch": {"heads": 3}}})
    with pytest.raises(FrozenbridgeError, match="retrieval.text.pool = 'max' is not allowed"):
        load({"retrieval": {"text": {"pool": "max"}}})
