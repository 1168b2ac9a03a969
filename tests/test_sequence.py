"""Sequences: image slots, labels only on the target (end-of-text included), padding sides."""

from __future__ import annotations

import pytest
import torch

from frozenbridge.backbones import load_language
from frozenbridge.params import LanguageParams
from frozenbridge.sequence import IGNORE, Item, Tokens, build, embed


@pytest.fixture(scope="module")
def tokens(tiny_models):
    return Tokens(load_language(LanguageParams(name=str(tiny_models["qwen2"]))).tokenizer)


def decode(tokens: Tokens, ids) -> str:
    return tokens.tok.decode([i for i in ids])


def test_labels_cover_target_and_eos_only(tokens):
    batch = build([Item(0, "Caption:", "a red square")], tokens, n_image=4, with_target=True, left_pad=False)
    ids, labels, img = batch.ids[0], batch.labels[0], batch.image_mask[0]
    target = labels[labels != IGNORE].tolist()
    assert target[-1] == tokens.eos
    assert decode(tokens, target[:-1]) == " a red square"
    assert img.sum() == 4 and decode(tokens, ids[:img.nonzero()[0, 0]]) == "Image:"
    after = ids[img.nonzero()[-1, 0] + 1: len(ids) - len(target)]
    assert decode(tokens, after) == "\nCaption:"
    assert (labels[: len(ids) - len(target)] == IGNORE).all()


def test_no_picture_has_no_image_prefix(tokens):
    batch = build([Item(None, "Question: How many shapes are there? Answer:", "two")], tokens, 4, True, False)
    assert not batch.image_mask.any() and batch.images == []
    prompt = batch.ids[0][batch.labels[0] == IGNORE]
    assert decode(tokens, prompt) == "Question: How many shapes are there? Answer:"


def test_right_padding_to_longest_and_left_padding(tokens):
    items = [Item(0, "Caption:", "a red square"), Item(1, "Caption:", "an orange circle, a yellow circle and a red square")]
    right = build(items, tokens, 4, True, left_pad=False)
    lengths = right.attention_mask.sum(1)
    assert right.ids.shape[1] == lengths.max()  # padded only to the longest member
    assert right.attention_mask[0, : lengths[0]].all() and not right.attention_mask[0, lengths[0]:].any()
    prompts = [Item(0, "Caption:", ""), Item(None, "Question: What color is the leftmost shape? Answer:", "")]
    left = build(prompts, tokens, 4, False, left_pad=True)
    assert left.attention_mask[:, -1].all() and not left.attention_mask[0, 0] and left.attention_mask[1, 0]
    assert (left.labels == IGNORE).all()


def test_image_tokens_land_in_their_slots(tokens):
    items = [Item(0, "Caption:", "a"), Item(None, "Caption:", "b"), Item(1, "Caption:", "c")]
    batch = build(items, tokens, 2, True, False)
    text = torch.zeros(*batch.ids.shape, 3)
    image = torch.arange(2 * 2 * 3, dtype=torch.float32).reshape(2, 2, 3) + 1
    out = embed(batch, text, image)
    assert torch.equal(out[batch.image_mask], image.reshape(4, 3))
    assert (out[~batch.image_mask] == 0).all() and batch.images == [0, 1]
