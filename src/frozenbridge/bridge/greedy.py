"""Batched greedy decoding from input embeddings: with the KV cache (the default), or by recomputing every step.

Prompts are left-padded so every row's next token sits in the last column. The cached decoder is transformers'
`generate` (one prefill over prompt + image tokens, then one cached step per token, rows stopping at end-of-text).
`greedy_recompute` re-runs the whole sequence for every new token, as simple reference implementations do; it is
kept as the reference the cached path is tested against and as the baseline of the benchmark.
"""

from __future__ import annotations

import torch


@torch.no_grad()
def greedy_cached(model, embeds: torch.Tensor, mask: torch.Tensor, max_new_tokens: int, eos: int,
                  pad: int) -> torch.Tensor:
    """(B, new) token ids; rows that ended are filled with `pad` after their end-of-text."""
    return model.generate(inputs_embeds=embeds, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=False,
                          eos_token_id=eos, pad_token_id=pad, use_cache=True)


@torch.no_grad()
def greedy_recompute(model, embeds: torch.Tensor, mask: torch.Tensor, max_new_tokens: int, eos: int,
                     pad: int) -> torch.Tensor:
    """The same greedy decoding without a cache: the full sequence is run again for every new token."""
    table = model.get_input_embeddings()
    done = torch.zeros(embeds.shape[0], dtype=torch.bool, device=embeds.device)
    out = []
    for _ in range(max_new_tokens):
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = model(inputs_embeds=embeds, attention_mask=mask, position_ids=positions, use_cache=False).logits
        nxt = logits[:, -1].argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out.append(nxt)
        done |= nxt == eos
        embeds = torch.cat([embeds, table(nxt)[:, None].to(embeds.dtype)], 1)
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
        if done.all():
            break
    return torch.stack(out, 1)


def strip_after_eos(ids: torch.Tensor, eos: int, pad: int) -> list[list[int]]:
    """Per row, the tokens before the first end-of-text (and never a pad)."""
    rows = []
    for row in ids.tolist():
        row = row[: row.index(eos)] if eos in row else row
        rows.append([t for t in row if t != pad])
    return rows
