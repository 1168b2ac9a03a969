"""Recall on a test set, for long and short captions, both ways, beside what a random ranking scores; and the
phrasing diagnostic (a scene's left-to-right caption should find its right-to-left one, and back).

Long: the candidates are the test set's captions; a caption is right for the pictures it was written for (the
same words for two pictures count for both). Short: picture -> text ranks every phrase there is ("a red circle",
18 of them), right when the picture has that shape; text -> picture asks each picture's own phrase (on the
held-out set, a held-out pair where it has one) and counts any picture with that shape.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from frozenbridge.retrieval.data.texts import PAIRS, PHRASES, SceneTexts
from frozenbridge.retrieval.evaluation.recall import chance_recall, recall_relevant
from frozenbridge.retrieval.training.contrastive import similarity

Embed = Callable[[list[str]], torch.Tensor]  # texts -> vectors (n, d)


def relevance(texts: SceneTexts) -> dict[str, dict[str, np.ndarray]]:
    """Right-candidate masks, queries as rows: long and short, image_to_text and text_to_image."""
    long = np.array(texts.long)
    same = long[:, None] == long[None, :]
    contains = np.array([[p in pairs for p in PAIRS] for pairs in texts.pairs])
    query = np.array([PHRASES.index(s) for s in texts.short])
    return {"long": {"image_to_text": same, "text_to_image": same.T},
            "short": {"image_to_text": contains, "text_to_image": contains[:, query].T}}


@torch.no_grad()
def recall(image_vectors: torch.Tensor, texts: SceneTexts, embed: Embed) -> dict:
    """{long|short: {image_to_text|text_to_image: {R@1, R@5}}} for one test set's pictures (already projected)."""
    rel = relevance(texts)
    long = embed(texts.long)
    phrases = embed(list(PHRASES))
    queries = phrases[[PHRASES.index(s) for s in texts.short]]
    return {"long": {"image_to_text": recall_relevant(similarity(image_vectors, long).numpy(),
                                                      rel["long"]["image_to_text"]),
                     "text_to_image": recall_relevant(similarity(long, image_vectors).numpy(),
                                                      rel["long"]["text_to_image"])},
            "short": {"image_to_text": recall_relevant(similarity(image_vectors, phrases).numpy(),
                                                       rel["short"]["image_to_text"]),
                      "text_to_image": recall_relevant(similarity(queries, image_vectors).numpy(),
                                                       rel["short"]["text_to_image"])}}


def chance(texts: SceneTexts) -> dict:
    """The same table for a ranking at random (its expectation)."""
    rel = relevance(texts)
    return {length: {way: chance_recall(mask) for way, mask in ways.items()} for length, ways in rel.items()}


@torch.no_grad()
def phrasing_top1(texts: SceneTexts, embed: Embed) -> float:
    """How often a scene's left-to-right caption and its right-to-left one are each other's nearest, over the test
    set's scenes (mean of both directions; scenes with the same caption count as the same scene)."""
    sim = similarity(embed(texts.long), embed(texts.reversed)).numpy()
    long = np.array(texts.long)
    same = long[:, None] == long[None, :]
    ways = (recall_relevant(sim, same, ks=(1,))["R@1"], recall_relevant(sim.T, same.T, ks=(1,))["R@1"])
    return round(float(np.mean(ways)), 6)
