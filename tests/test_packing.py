"""Packed question rows (a picture once, then each of its questions) give each answer the loss and the connector the
gradient of the same questions unpacked, for the default language model and other families; a model that cannot
take a packed row trains on the questions unpacked, and says so."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import IGNORE, Item, Packed, Tokens, build, unpack
from frozenbridge.core.backbones import load_language
from frozenbridge.testing.tiny_language import LM_FAMILIES

CPU = torch.device("cpu")
QUESTIONS = (("Question: How many shapes are there? Answer:", "two"),
             ("Question: What color is the circle? Answer:", "red"),
             ("Question: What color is the leftmost shape? Answer:", "blue"),
             ("Question: What color is the square? Answer:", "green"))
# rows of different lengths, so right padding and a short last row are exercised
ROWS = [Packed(0, QUESTIONS), Packed(2, QUESTIONS[1:3]), Packed(3, QUESTIONS[:1] + QUESTIONS[3:])]


@pytest.fixture(scope="module")
def family_dirs(family_lms):
    return {family: family_lms / family for family in LM_FAMILIES}


@pytest.fixture(scope="module")
def default_lm():
    return load_language("smollm2-135m")


def vlm_for(lm, seed: int = 0) -> tuple[VLM, torch.Tensor]:
    torch.manual_seed(seed)
    connector = MergedPatchMLP([4, 4, 32], lm.width, merge=2, positions=True)
    return VLM(lm, connector, CPU, bf16=False), torch.randn(4, 16, 32, generator=torch.Generator().manual_seed(seed))


def loss_and_grads(vlm: VLM, items: list, feats: torch.Tensor) -> tuple[float, torch.Tensor]:
    vlm.connector.zero_grad()
    loss = vlm._loss(items, feats, bf16=False)
    loss.backward()
    return loss.item(), torch.cat([p.grad.flatten() for p in vlm.connector.parameters()])


def assert_packed_equals_unpacked(lm, rows=ROWS) -> None:
    vlm, feats = vlm_for(lm)
    assert vlm.packs(rows, feats) is True
    packed, grad_packed = loss_and_grads(vlm, rows, feats)
    alone, grad_alone = loss_and_grads(vlm, unpack(rows), feats)
    assert packed == pytest.approx(alone, rel=1e-5)
    assert grad_alone.abs().max() > 0
    torch.testing.assert_close(grad_packed, grad_alone, rtol=1e-4, atol=1e-5 * grad_alone.abs().max().item())


def test_default_language_model_packed_equals_unpacked(default_lm):
    assert_packed_equals_unpacked(default_lm)


# families that cannot take a packed row, and the reason their check logs (BLOOM's ALiBi biases come from the 2D
# padding mask, not from position ids)
UNPACKED = {"bloom": "BloomModel computes its positions from the padding mask"}


@pytest.mark.parametrize("family", ["qwen2", *LM_FAMILIES])
def test_other_families_packed_equal_unpacked(family, tiny_models, family_dirs, caplog):
    """Packed rows give the unpacked loss and gradient (Gemma2's sliding window, 8 positions here, binds: its
    sliding layers get the window on positions); a family that cannot take them (BLOOM) trains on the same
    questions unpacked and says why in one line. Either way training's loss is the one the model's own logits give."""
    path = tiny_models["qwen2"] if family == "qwen2" else family_dirs[family]
    lm = load_language(str(path))
    if family not in UNPACKED:
        assert_packed_equals_unpacked(lm)
    else:
        vlm, feats = vlm_for(lm)
        with caplog.at_level(logging.INFO, logger="frozenbridge.model"):
            loss = vlm.loss(ROWS, feats).item()
        lines = [r.getMessage() for r in caplog.records if "packed question batches" in r.getMessage()]
        assert vlm.packing is False and len(lines) == 1
        assert "not with this language model" in lines[0] and UNPACKED[family] in lines[0]
        assert loss == pytest.approx(vlm._loss(unpack(ROWS), feats, bf16=False).item(), rel=1e-6)
    assert_loss_is_the_models_own(lm)


def test_a_sliding_window_binds_on_positions(family_dirs, caplog, monkeypatch):
    """Gemma2's window (8 positions) is shorter than a packed row: without the window on positions its sliding
    layers would see more than each question alone sees, and the check would find the losses differ."""
    from frozenbridge.bridge.sequence import Batch

    lm = load_language(str(family_dirs["gemma2"]))
    assert lm.model.config.sliding_window == 8 and "sliding_attention" in lm.model.config.layer_types
    whole = Batch.attention_4d
    monkeypatch.setattr(Batch, "attention_4d", lambda self, window=None: whole(self))
    vlm, feats = vlm_for(lm)
    with caplog.at_level(logging.INFO, logger="frozenbridge.model"):
        assert vlm.packs(ROWS, feats) is False
    assert "differs from its questions' unpacked" in caplog.text


def assert_loss_is_the_models_own(lm) -> None:
    """The loss on targets only (decoder, then output_logits) is the cross-entropy of the full forward's logits."""
    vlm, feats = vlm_for(lm)
    items = unpack(ROWS)
    batch, embeds, mask = vlm.inputs(items, feats, with_target=True, left_pad=False)
    with torch.no_grad():
        logits = lm.model(inputs_embeds=embeds, attention_mask=mask, use_cache=False).logits[:, :-1]
        labels = batch.labels[:, 1:]
        where = labels != IGNORE
        expected = torch.nn.functional.cross_entropy(logits[where].float(), labels[where]).item()
        assert vlm._loss(items, feats, bf16=False).item() == pytest.approx(expected, rel=1e-5)


def test_eager_attention_takes_the_additive_mask(tiny_models):
    lm = load_language(str(tiny_models["qwen2"]))
    lm.model.config._attn_implementation = "eager"
    assert_packed_equals_unpacked(lm)


def test_packed_row_has_each_question_at_its_own_positions(tiny_models):
    """The tokens and positions of each question segment are exactly those of the question alone, and a segment sees
    the picture and itself, never another question."""
    lm = load_language(str(tiny_models["qwen2"]))
    tokens = Tokens(lm.tokenizer)
    packed = build([ROWS[0]], tokens, 4, with_target=True, left_pad=False)
    seg, pos = packed.segments[0], packed.positions[0]
    mask = packed.attention_4d()[0, 0]
    prefix = int((seg == 0).sum())
    for k, item in enumerate(ROWS[0].unpack(), start=1):
        alone = build([item], tokens, 4, with_target=True, left_pad=False)
        where = seg == k
        assert packed.ids[0, where].tolist() == alone.ids[0, prefix:].tolist()
        assert pos[where].tolist() == list(range(prefix, alone.ids.shape[1]))
        assert packed.labels[0, where].tolist() == alone.labels[0, prefix:].tolist()
        sees = mask[where.nonzero()[-1].item()]  # the segment's last token
        assert sees[:prefix].all() and not sees[(seg != 0) & (seg != k)].any()
    assert (packed.labels[0] != IGNORE).sum() == sum(len(tokens.target(i, True)) for i in ROWS[0].unpack())


def test_a_model_that_ignores_custom_masks_trains_unpacked(tiny_models, caplog):
    lm = load_language(str(tiny_models["qwen2"]))
    lm.model.config._attn_implementation = "flash_attention_2"
    vlm, feats = vlm_for(lm)
    with caplog.at_level(logging.INFO, logger="frozenbridge.model"):
        assert vlm.packs(ROWS, feats) is False
    assert "not with this language model" in caplog.text and "flash_attention_2" in caplog.text


def test_a_model_that_drops_the_positions_fails_the_check_and_trains_unpacked(default_lm, caplog, monkeypatch):
    """A decoder that computes positions itself (0..L-1 whatever it is given) breaks the equality: the check on the
    first batch finds it, and the loss of that batch is the unpacked one. (Real weights: a tiny random model's
    attention is too uniform for positions to move its loss past the tolerance.)"""
    lm = default_lm
    decoder = lm.model.get_decoder()
    forward = decoder.forward
    monkeypatch.setattr(decoder, "forward", lambda *a, position_ids=None, **k: forward(*a, **k))
    vlm, feats = vlm_for(lm)
    with caplog.at_level(logging.INFO, logger="frozenbridge.model"):
        loss = vlm.loss(ROWS, feats).item()
    assert vlm.packing is False and "differs from its questions' unpacked" in caplog.text
    assert loss == pytest.approx(vlm._loss(unpack(ROWS), feats, bf16=False).item(), rel=1e-6)


def test_question_batches_hold_whole_pictures_in_the_seeds_order():
    from tests.test_train import tiny_split

    from frozenbridge.shapes.training.split_data import pictures_per_batch, question_batches

    data = tiny_split(n=12)
    per = pictures_per_batch(data, 8)
    questions = sum(len(q) for q in data.questions)
    assert per == round(8 * 12 / questions)
    a = question_batches(data, np.random.SeedSequence(5), 8)
    b = question_batches(data, np.random.SeedSequence(5), 8)
    first = next(a)
    assert first == next(b) and len(first) == per
    rng_order = np.random.default_rng(np.random.SeedSequence(5)).permutation(12).tolist()
    assert [row.image for row in first] == rng_order[:per]
    for row in first:  # every question of the picture, in order
        assert [target for _, target in row.questions] == [q["answer"] for q in data.questions[row.image]]
    assert all(isinstance(i, Item) for i in unpack(first))


def test_the_check_runs_in_fp32_on_bf16_weights_and_leaves_them_as_they_were(default_lm):
    """Training casts the frozen model to bf16 once; the check upcasts it for a moment and restores it bit for bit."""
    import copy

    from frozenbridge.core.precision import prepare_frozen

    lm = copy.copy(default_lm)
    lm.model = prepare_frozen(copy.deepcopy(default_lm.model), CPU, bf16=True)
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    vlm, feats = vlm_for(lm)
    vlm.bf16 = True
    assert vlm.packs(ROWS, feats) is True
    after = lm.model.state_dict()
    assert all(after[k].dtype == v.dtype and torch.equal(after[k], v) for k, v in before.items())
    assert any(v.dtype == torch.bfloat16 for v in after.values())
