"""The symmetric InfoNCE loss of CLIP with a learned temperature.

Row i of the image and text embeddings is a matched pair; every other row of the batch is a negative. Both are
L2-normalised, their cosine similarities scaled by exp(log_scale) (CLIP's learned inverse temperature, started at
1/0.07 and capped at 100), and the loss is the mean of the image->text and text->image cross-entropies.

When several texts describe a picture (a short caption fits every picture with that shape), a `positives` mask
says so, and each query's loss is minus the log of the probability it gives all its positives together, so a
batch never pushes a picture away from a text that is right for it.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

MAX_SCALE = 100.0


class Temperature(nn.Module):
    def __init__(self, initial: float = 0.07):
        super().__init__()
        self.log_scale = nn.Parameter(torch.tensor(math.log(1.0 / initial)))

    def forward(self) -> torch.Tensor:
        return self.log_scale.clamp(max=math.log(MAX_SCALE)).exp()


def similarity(images: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
    """(n, d), (m, d) -> (n, m) cosine similarities."""
    return F.normalize(images, dim=-1) @ F.normalize(texts, dim=-1).T


def _multi_positive(logits: torch.Tensor, positives: torch.Tensor) -> torch.Tensor:
    """Mean over rows of -log(sum of the softmax over the row's positive columns)."""
    hits = logits.masked_fill(~positives, float("-inf")).logsumexp(1)
    return (logits.logsumexp(1) - hits).mean()


def info_nce(images: torch.Tensor, texts: torch.Tensor, scale: torch.Tensor | float,
             positives: torch.Tensor | None = None) -> torch.Tensor:
    """Symmetric InfoNCE over a batch: matched rows (square, `positives` None) or a (images, texts) bool mask of
    which text is right for which picture (each row and column needs one)."""
    logits = similarity(images, texts) * scale
    if positives is None:
        target = torch.arange(len(images), device=images.device)
        return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2
    if not (positives.any(1).all() and positives.any(0).all()):
        raise ValueError("every picture and every text needs at least one positive")
    return (_multi_positive(logits, positives) + _multi_positive(logits.T, positives.T)) / 2
