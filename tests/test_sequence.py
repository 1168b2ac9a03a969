"""Sequences: image slots, labels only on the target (end-of-text included), padding sides."""

from __future__ import annotations

import pytest
import torch

from frozenbridge.bridge.sequence import IGNORE, Item, Tokens, build, embed
from frozenbridge.core.backbones import load_language


@pytest.fixture(scope="module")
def tokens(tiny_models):
    return Tokens(load_language(str(tiny_models["qwen2"])).tokenizer)


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
    items = [Item(0, "Caption:", "a red square"),
             Item(1, "Caption:", "an orange circle, a yellow circle and a red square")]
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


def test_one_picture_item_is_the_interleaved_run_it_stands_for(tokens):
    """Today's one-picture layout, token for token, is the interleaved ("Image:", picture, "\\n" + prompt)."""
    from frozenbridge.bridge.sequence import Interleaved

    items = [Item(3, "Caption:", "a red square"), Item(None, "Question: How many shapes are there? Answer:", "two")]
    same = [Interleaved(("Image:", 3, "\nCaption:"), "a red square"),
            Interleaved(("Question: How many shapes are there? Answer:",), "two")]
    for with_target, left in ((True, False), (False, True)):
        a, b = build(items, tokens, 4, with_target, left), build(same, tokens, 4, with_target, left)
        for field in ("ids", "image_mask", "attention_mask", "labels"):
            assert torch.equal(getattr(a, field), getattr(b, field)), field
        assert a.images == b.images == [3]
    ids = build(items[:1], tokens, 4, True, False).ids[0].tolist()
    assert ids[:len(tokens.bos)] == tokens.bos
    assert decode(tokens, ids[len(tokens.bos):len(tokens.bos) + len(tokens.ids("Image:"))]) == "Image:"


def test_several_pictures_interleaved_with_text(tokens):
    from frozenbridge.bridge.sequence import Interleaved

    item = Interleaved(("Image:", 5, " and Image:", 2, "\nQuestion: Which has more shapes? Answer:"), "the first")
    batch = build([item, Item(7, "Caption:", "a")], tokens, n_image=3, with_target=True, left_pad=False)
    assert batch.images == [5, 2, 7]  # row by row, left to right within a row
    slots = batch.image_mask[0].nonzero().flatten().tolist()
    assert len(slots) == 6 and slots[2] + 1 < slots[3]  # two runs of 3 slots with text between them
    between = batch.ids[0, slots[2] + 1: slots[3]].tolist()
    assert decode(tokens, between) == " and Image:"
    text = torch.zeros(*batch.ids.shape, 2)
    image = torch.arange(3 * 3 * 2, dtype=torch.float32).reshape(3, 3, 2) + 1  # pictures 5, 2, 7 in that order
    out = embed(batch, text, image)
    assert torch.equal(out[0, slots[:3]], image[0]) and torch.equal(out[0, slots[3:]], image[1])
    assert torch.equal(out[1][batch.image_mask[1]], image[2])
