"""Pictures anywhere in the text: how many positions text and pictures take, and a two-picture question no run
was trained on ("Which picture has a triangle, the first or the second?", exactly one has), asked with the pictures
in both orders; a run that answers by position rather than by looking is right in one order only.
"""

from __future__ import annotations

import logging
from collections import Counter

import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Interleaved, Item, build
from frozenbridge.shapes.data.scene import COUNT_QUESTION
from frozenbridge.shapes.data.vocab import question_prompt
from frozenbridge.shapes.evaluation.exact import exact_match, percent

log = logging.getLogger("frozenbridge.shapes")

QUESTION = "Which picture has a triangle, the first or the second?"
ANSWERS = ("the first", "the second")


def two_picture_item(first: int, second: int, answer: str) -> Interleaved:
    return Interleaved(("Image:", first, "\nImage:", second, "\n" + question_prompt(QUESTION)), answer)


def positions(vlm: VLM) -> dict:
    """Positions in the sequence for text only, one picture and text, two pictures and text (the count question),
    and how many of them the pictures take."""
    prompt = question_prompt(COUNT_QUESTION)
    inputs = {"text only": Item(None, prompt, ""), "one picture and text": Item(0, prompt, ""),
              "two pictures and text": Interleaved(("Image:", 0, "\nImage:", 1, "\n" + prompt), "")}
    out = {}
    for name, item in inputs.items():
        batch = build([item], vlm.tokens, vlm.connector.n_out, with_target=False, left_pad=False)
        out[name] = {"positions": int(batch.attention_mask.sum()), "from_pictures": int(batch.image_mask.sum())}
    return out


def picture_pairs(scenes: list[list[dict]], n: int) -> list[tuple[int, int]]:
    """Up to n pairs of distinct pictures, in picture order, of which exactly one holds a triangle; fewer when the
    set cannot make n, said in one warning line."""
    has = [any(s["kind"] == "triangle" for s in shapes) for shapes in scenes]
    with_t = [i for i, h in enumerate(has) if h]
    without = [i for i, h in enumerate(has) if not h]
    pairs = []
    for k, (a, b) in enumerate(zip(with_t, without)):
        pairs.append((a, b) if k % 2 == 0 else (b, a))  # the triangle first in every other pair
        if len(pairs) == n:
            break
    if len(pairs) < n:
        log.warning("shapes.evaluate.items=%d: the seen test set makes %d two-picture pairs (%d pictures with a "
                    "triangle, %d without); asking %d", n, len(pairs), len(with_t), len(without), len(pairs))
    return pairs


def ask(vlm: VLM, feats: torch.Tensor, scenes: list[list[dict]], n: int, batch_size: int,
        max_new: int) -> dict:
    """Exact-match score of the two-picture question in the given order and swapped, and right in both orders."""
    has = [any(s["kind"] == "triangle" for s in shapes) for shapes in scenes]
    pairs = picture_pairs(scenes, n)
    replies: dict[str, list[str]] = {}
    for order, pics in (("given", pairs), ("swapped", [(b, a) for a, b in pairs])):
        items = [two_picture_item(a, b, ANSWERS[0] if has[a] else ANSWERS[1]) for a, b in pics]
        said = []
        for i in range(0, len(items), batch_size):
            chunk = items[i:i + batch_size]
            said += vlm.generate([Interleaved(it.pieces, "") for it in chunk], feats, max_new)
        replies[order] = said
        replies[order + "_targets"] = [it.target for it in items]
    right = {o: [exact_match(p, t) for p, t in zip(replies[o], replies[o + "_targets"])] for o in ("given", "swapped")}
    both = [a and b for a, b in zip(right["given"], right["swapped"])]
    said = Counter(replies["given"] + replies["swapped"])
    return {"pairs": len(pairs), "given": percent(sum(right["given"]), len(pairs)),
            "swapped": percent(sum(right["swapped"]), len(pairs)), "both": percent(sum(both), len(pairs)),
            "replies": dict(said.most_common(3))}
