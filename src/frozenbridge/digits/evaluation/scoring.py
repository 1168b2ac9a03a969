"""Greedy captions from the frozen character model and how they score: the right digit word, a well-formed sentence,
and how many different captions were written (one for every picture = the picture is ignored)."""

from __future__ import annotations

from collections import Counter

import torch

from frozenbridge.digits.data.sentences import BOS, EOS, LENGTH, decode, digit_named, well_formed
from frozenbridge.digits.training.charlm import CharLM


@torch.no_grad()
def greedy(model: CharLM, prefix: torch.Tensor, batch_size: int = 1000) -> list[str]:
    """One caption a row of `prefix` (n, slots, width), the most likely character each time, up to LENGTH - 1.
    Each step runs the model on the new character alone, the earlier positions' keys and values cached
    (CharLM.extend): the captions of recomputing the whole sequence each step, about 6x faster."""
    out: list[str] = []
    for start in range(0, len(prefix), batch_size):
        front = prefix[start:start + batch_size]
        tokens = torch.full((len(front), 1), BOS)
        h = torch.cat([front, model.embed(tokens)], dim=1) + model.positions[:, :front.shape[1] + 1]
        cache = None
        for _ in range(LENGTH - 1):
            h, cache = model.extend(h, cache)
            nxt = model.out(h[:, -1]).argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], dim=1)
            if bool((tokens == EOS).any(dim=1).all()):
                break
            at = front.shape[1] + tokens.shape[1] - 1  # the new character's position
            h = model.embed(nxt) + model.positions[:, at:at + 1]
        out += [decode(row) for row in tokens.tolist()]
    return out


def score(captions: list[str], labels: list[int]) -> dict:
    """Share of captions naming the right digit as their last word, share well-formed, distinct captions."""
    n = len(captions)
    right = sum(digit_named(c) == y for c, y in zip(captions, labels))
    return {"accuracy": round(right / n, 6), "well_formed": round(sum(map(well_formed, captions)) / n, 6),
            "distinct": len(set(captions)), "most_common": Counter(captions).most_common(1)[0][0]}
