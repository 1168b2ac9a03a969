"""The shared-prefill lever the evaluation is measured against (the prefill benchmark, bench/prefill.py)."""

from __future__ import annotations

import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.core.backbones import load_language
from frozenbridge.bridge.ask import generate_once
from frozenbridge.bench.prefill import answer_keys, shared_prefill
from test_train import CPU, tiny_split


def test_shared_prefill_answers_as_the_evaluation_in_fp32_and_runs_each_picture_once(tiny_models):
    lm = load_language(str(tiny_models["qwen2"]))
    data = tiny_split(12)
    torch.manual_seed(0)
    vlm = VLM(lm, MergedPatchMLP([4, 4, 32], lm.width, merge=2), CPU, bf16=False)
    feats = torch.cat([data.feats, torch.zeros(1, 16, 32, dtype=data.feats.dtype)])
    keys = answer_keys(data, len(data.feats), 8, "test")
    assert keys and all(picture is not None for picture, _ in keys)
    seen = []  # the sequence length of every forward the decoder runs
    hook = lm.model.get_decoder().register_forward_pre_hook(
        lambda _, args, kwargs: seen.append(next(kwargs[k] for k in ("inputs_embeds", "input_ids")
                                                 if kwargs.get(k) is not None).shape[1]), with_kwargs=True)
    try:
        shared = shared_prefill(vlm, keys, feats, batch_size=5, max_new=3)
    finally:
        hook.remove()
    expected = generate_once(vlm, keys, feats, 5, 3, "test")
    assert shared == expected
    prefix = len(vlm.tokens.bos) + len(vlm.tokens.ids("Image:")) + vlm.connector.n_out
    prompts = {len(vlm.tokens.ids("\n" + prompt)) for _, prompt in keys}
    assert seen.count(prefix) == -(-len({p for p, _ in keys}) // 5)  # the pictures' prefixes, batches of five
    # every other forward is a question's own tokens (its picture never run again) or one decoded token
    assert prompts <= set(seen) <= prompts | {prefix, 1}
