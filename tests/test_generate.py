"""The cached decoder writes exactly what a from-scratch recompute writes, token for token, on mixed lengths."""

from __future__ import annotations

import pytest
import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.greedy import strip_after_eos
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Item
from frozenbridge.core.backbones import load_language


@pytest.fixture(scope="module")
def vlm(tiny_models):
    lm = load_language(str(tiny_models["qwen2"]))
    torch.manual_seed(0)
    # a sharper random model, so greedy continuations vary and reach end-of-text at different steps
    with torch.no_grad():
        for p in lm.model.parameters():
            p.mul_(4.0)
    return VLM(lm, MergedPatchMLP([4, 4, 32], lm.width, merge=2), torch.device("cpu"), bf16=False)


def test_cached_equals_recompute_on_mixed_lengths(vlm):
    feats = torch.randn(3, 16, 32)
    items = [Item(0, "Caption:", ""), Item(None, "Question: How many shapes are there? Answer:", ""),
             Item(1, "Question: What color is the leftmost shape? Answer:", ""), Item(2, "Caption:", ""),
             Item(None, "Caption:", "")]
    first = vlm.generate_ids(items, feats, 12, cached=True)
    assert first == vlm.generate_ids(items, feats, 12, cached=False)
    # call a token the first row writes mid-way "end-of-text", so rows stop at different steps
    eos, vlm.tokens.eos = vlm.tokens.eos, first[0][3]
    try:
        cached = vlm.generate_ids(items, feats, 12, cached=True)
        assert cached == vlm.generate_ids(items, feats, 12, cached=False)
        assert len(cached[0]) == 3 and len({len(r) for r in cached}) > 1
        # batching and padding change nothing: each item alone gives the same tokens
        assert [vlm.generate_ids([it], feats, 12)[0] for it in items] == cached
    finally:
        vlm.tokens.eos = eos


def test_strip_after_eos():
    ids = torch.tensor([[5, 6, 2, 9], [7, 2, 0, 0], [8, 8, 8, 8]])
    assert strip_after_eos(ids, eos=2, pad=0) == [[5, 6], [7], [8, 8, 8, 8]]
