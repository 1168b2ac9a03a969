"""One retrieval run: a text tower and the picture projection trained for one replicate, then scored.

Within a replicate every tower sees the same batches in the same order (paired), so towers differ only in the
text side. Writes weights.pt (the trained parts) and result.json (recall per test set and caption length, both
ways; the phrasing diagnostic before and after the tower; the loss per epoch; trainable parameters).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.saved_module import write_module
from frozenbridge.core.seeds import rng, seed_int
from frozenbridge.retrieval.data.texts import PHRASES
from frozenbridge.retrieval.data.vectors import load_study, load_text_cache
from frozenbridge.retrieval.evaluation.scoring import chance, phrasing_top1, recall
from frozenbridge.retrieval.params import TOWERS
from frozenbridge.retrieval.paths import CACHES
from frozenbridge.retrieval.training.loop import Batches, train
from frozenbridge.retrieval.training.towers import FeatureTower, ImageProjection, ScratchTower, trainable

log = logging.getLogger("frozenbridge.retrieval")
STUDY = 0x7E7A  # keeps this study's random streams apart from the others' for the same `seed`


def seeds(seed: int, replicate: int, tower: str) -> tuple[np.random.Generator, int]:
    """(the batch stream, shared by every tower of a replicate; the tower's initial-weights seed)."""
    batches = rng(seed, STUDY, replicate)
    init = seed_int(seed, STUDY, replicate, TOWERS.index(tower))
    return batches, init


def build_tower(name: str, params, cache, train_rows: torch.Tensor) -> torch.nn.Module:
    r = params.retrieval
    if name == "scratch":
        return ScratchTower(cache.tokens, r.dim, r.scratch.width, r.scratch.layers, r.scratch.heads)
    return FeatureTower(cache.feats, train_rows, r.dim, r.adaptor.hidden if name == "adaptor" else None)


def train_run(params, tower_name: str, replicate: int, out: Path) -> dict:
    train_split, tests = load_study(params)
    cache = load_text_cache(params, CACHES.get(tower_name, "lm"))
    long_rows, phrase_rows = cache.index(train_split.texts.long), cache.index(list(PHRASES))
    train_rows = torch.unique(torch.cat([long_rows, phrase_rows]))
    draws, init = seeds(params.seed, replicate, tower_name)
    torch.manual_seed(init)
    image = ImageProjection(train_split.vectors, params.retrieval.dim)
    tower = build_tower(tower_name, params, cache, train_rows)

    def embed(texts: list[str]) -> torch.Tensor:
        return tower(cache.index(texts))

    def raw(texts: list[str]) -> torch.Tensor:
        return cache.feats[cache.index(texts)]

    temperature, history = train(tower, image, train_split.vectors, Batches(train_split.texts, long_rows, phrase_rows),
                                 params.retrieval.train, draws, f"retrieval {tower_name}/{replicate}")
    result = {"tower": tower_name, "replicate": replicate, "trainable": trainable(tower, image),
              "final_loss": history[-1]["loss"], "scale": history[-1]["scale"], "history": history,
              "recall": {}, "chance": {}, "phrasing": {}}
    with torch.no_grad():
        for name, test in tests.items():
            result["recall"][name] = recall(image(test.vectors), test.texts, embed)
            result["chance"][name] = chance(test.texts)
            result["phrasing"][name] = {"after": phrasing_top1(test.texts, embed),
                                        "before": None if tower_name == "scratch" else phrasing_top1(test.texts, raw)}
    log.info("%s/%d: loss %.4f, long R@1 seen %s, held-out %s", tower_name, replicate, result["final_loss"],
             result["recall"]["seen"]["long"], result["recall"]["heldout"]["long"])
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        write_module(tmp, {"tower": tower.state_dict(), "image": image.state_dict(),
                           "temperature": temperature.state_dict()},
                     {"tower": tower_name, "dim": params.retrieval.dim, "text_cache": CACHES.get(tower_name)})
        write_json(tmp / "result.json", result)
    return result
