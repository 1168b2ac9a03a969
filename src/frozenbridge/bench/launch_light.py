"""A GPU's training step and decoding made launch-light, for the GPU benchmark (bench/gpu.py) to time.

At the study's sizes a GPU step is bound by kernel launches, not arithmetic (a SmolLM2-sized caption step at batch 16
used about 1% of an H200's bf16 peak). Two remedies, timed beside the eager paths:
- the training step's loss (frozen decoder, output layer at the target positions, cross-entropy) compiled by
  inductor, with CUDA graphs where its shapes are fixed (mode "reduce-overhead": one graph replay a step instead of
  hundreds of launches). Caption batches differ in length, so `bucketed` pads a batch's rows to the next multiple
  of `bucket` tokens: a handful of shapes, each captured once.
- greedy decoding through transformers' static KV cache, whose fixed shapes let `generate` compile the decode step
  (transformers compiles the forward itself when the cache is static); the cache takes the inputs' dtype, so
  the inputs go in as bf16, without autocast.
"""

from __future__ import annotations

import torch
from torch import nn

from frozenbridge.bridge.sequence import IGNORE, Item


def bucketed(ids: torch.Tensor, fill: int, bucket: int) -> torch.Tensor:
    """`ids` (B, L) right-padded with `fill` to the next multiple of `bucket` columns."""
    extra = -ids.shape[1] % bucket
    return nn.functional.pad(ids, (0, extra), value=fill) if extra else ids


def compiled_step(vlm, feats: torch.Tensor, items: list[Item], mode: str | None, bucket: int = 16):
    """One training step (zero_grad, loss, backward) whose decoder, output layer and loss run as one compiled
    graph; `mode` "reduce-overhead" adds CUDA graphs, None is inductor alone. The image tokens and the batch's
    token ids are made outside the graph, as in the eager step; labels and padding are bucketed to fixed widths."""
    model = vlm.lm.model
    decoder, head = model.get_decoder(), model.get_output_embeddings()

    def loss_of(embeds: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with torch.autocast(vlm.device.type, dtype=torch.bfloat16, enabled=vlm.bf16):
            hidden = decoder(inputs_embeds=embeds, attention_mask=mask, use_cache=False).last_hidden_state
            logits = head(hidden[:, :-1])
        # every position's logits, the padded ones ignored: fixed shapes, no data-dependent indexing in the graph
        return nn.functional.cross_entropy(logits.float().flatten(0, 1), labels[:, 1:].flatten(),
                                           ignore_index=IGNORE)

    compiled = torch.compile(loss_of, mode=mode, dynamic=False)
    batch, embeds, mask = vlm.inputs(items, feats, with_target=True, left_pad=False)
    width = embeds.shape[1] + (-embeds.shape[1] % bucket)
    pad = width - embeds.shape[1]
    labels = bucketed(batch.labels.to(vlm.device), IGNORE, bucket)
    mask = bucketed(mask, 0, bucket)

    def step():
        vlm.connector.zero_grad(set_to_none=True)
        _, e, _ = vlm.inputs(items, feats, with_target=True, left_pad=False)
        e = nn.functional.pad(e, (0, 0, 0, pad)) if pad else e
        loss = compiled(e, mask, labels)
        loss.backward()
        return loss
    return step


def static_generation(vlm, feats: torch.Tensor, batch: int, new_tokens: int):
    """Exactly `new_tokens` greedy tokens for `batch` captions through a static KV cache (the decode step compiled by
    transformers), as bench.parts.generation's cached path does with the dynamic cache."""
    items = [Item(i, "Caption:", "") for i in range(batch)]
    _, embeds, mask = vlm.inputs(items, feats, with_target=False, left_pad=True)

    if vlm.bf16:  # the cache is made in the inputs' dtype: bf16 inputs, no autocast
        embeds = embeds.to(torch.bfloat16)

    def run():
        with torch.no_grad():
            vlm.lm.model.generate(inputs_embeds=embeds, attention_mask=mask, max_new_tokens=new_tokens,
                                  min_new_tokens=new_tokens, do_sample=False, pad_token_id=vlm.tokens.pad,
                                  use_cache=True, cache_implementation="static")
    return run
