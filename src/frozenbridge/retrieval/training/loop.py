"""Contrastive training of one text tower and the picture projection on the training pictures.

Each batch takes B pictures and, for each, its long caption and one of its shapes as a short caption (drawn anew
each epoch), so one batch holds 2B texts. A text is a positive for every picture of the batch it is right for: the
long caption for the pictures with that exact caption, a short one for every picture with that shape.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from frozenbridge.retrieval.data.texts import PAIRS, SceneTexts
from frozenbridge.retrieval.training.contrastive import Temperature, info_nce


class Batches:
    """Text rows and positives for batches of training pictures."""

    def __init__(self, texts: SceneTexts, long_rows: torch.Tensor, phrase_rows: torch.Tensor):
        self.long_rows, self.phrase_rows = long_rows, phrase_rows
        self.options = [sorted(PAIRS.index(p) for p in pairs) for pairs in texts.pairs]  # phrases right for each
        self.contains = torch.zeros(len(texts.pairs), len(PAIRS), dtype=torch.bool)
        for pic, opts in enumerate(self.options):
            self.contains[pic, opts] = True

    def __len__(self) -> int:
        return len(self.options)

    def make(self, pics: np.ndarray, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(picture indices, text rows (2B), positives (B, 2B))."""
        pics_t = torch.as_tensor(pics)
        short = torch.tensor([self.options[p][int(rng.integers(len(self.options[p])))] for p in pics])
        long_rows = self.long_rows[pics_t]
        positives = torch.cat([long_rows[:, None] == long_rows[None, :], self.contains[pics_t][:, short]], dim=1)
        return pics_t, torch.cat([long_rows, self.phrase_rows[short]]), positives


def train(tower: nn.Module, image: nn.Module, vectors: torch.Tensor, batches: Batches, cfg, rng: np.random.Generator,
          desc: str) -> tuple[Temperature, list[dict]]:
    """Train `tower` and `image` in place (AdamW, cosine decay); returns the temperature and the loss per epoch."""
    temperature = Temperature(cfg.temperature)
    weights = [p for m in (tower, image) for p in m.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": weights, "weight_decay": cfg.weight_decay},
                                   {"params": temperature.parameters(), "weight_decay": 0.0}], lr=cfg.lr)
    per_epoch = math.ceil(len(batches) / cfg.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, cfg.epochs * per_epoch, eta_min=cfg.lr / 10)
    history = []
    tower.train()
    image.train()
    for epoch in tqdm(range(1, cfg.epochs + 1), desc=desc, unit="epoch"):
        order, losses = rng.permutation(len(batches)), []
        for start in range(0, len(order), cfg.batch_size):
            pics, rows, positives = batches.make(order[start:start + cfg.batch_size], rng)
            loss = info_nce(image(vectors[pics]), tower(rows), temperature(), positives)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
        history.append({"epoch": epoch, "loss": round(float(np.mean(losses)), 6),
                        "scale": round(float(temperature().detach()), 4)})
    tower.eval()
    image.eval()
    return temperature, history
