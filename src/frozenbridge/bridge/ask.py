"""A trained run asked every test item under the four conditions (core.controls): its own picture, a blank one, the
wrong one and none. Each distinct (picture, prompt) is generated once, greedily, whichever items and conditions share
it, and prompts of one length go together, so batches pad little. The shapes study's evaluation and the audit both
ask through here, so their answers come from one procedure.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Item
from frozenbridge.core.controls import CONDITIONS, Asked, shown


def generate_once(vlm: VLM, keys: list[tuple[int | None, str]], feats: torch.Tensor, batch_size: int, max_new: int,
                  desc: str) -> dict[tuple[int | None, str], str]:
    """Every distinct (feature row or None, prompt) generated once, in batches of prompts of one length."""
    unique = sorted(set(keys), key=lambda k: (k[0] is None, len(vlm.tokens.ids(k[1])), k[1], k[0] or 0))
    said: dict[tuple[int | None, str], str] = {}
    for i in tqdm(range(0, len(unique), batch_size), desc=desc, unit="batch", leave=False):
        chunk = unique[i:i + batch_size]
        said.update(zip(chunk, vlm.generate([Item(row, prompt, "") for row, prompt in chunk], feats, max_new),
                        strict=True))
    return said


def answer(vlm: VLM, items: list[Asked], feats: torch.Tensor, blank_row: int, batch_size: int, max_new: int,
           desc: str) -> dict[str, list[str]]:
    """What the run says to every item under each condition, {condition: answers in item order}; feats holds every
    row the items name, the blank picture at `blank_row`."""
    vlm.connector.eval()
    keys = [(shown(it, c, blank_row), it.prompt) for it in items for c in CONDITIONS]
    said = generate_once(vlm, keys, feats, batch_size, max_new, desc)
    return {c: [said[(shown(it, c, blank_row), it.prompt)] for it in items] for c in CONDITIONS}
