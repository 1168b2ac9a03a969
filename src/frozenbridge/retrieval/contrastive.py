"""The symmetric InfoNCE loss of CLIP with a learned temperature.

Row i of the image and text embeddings is a matched pair; every other row of the batch is a negative. Both are
L2-normalised, their cosine similarities scaled by exp(log_scale) (CLIP's learned inverse temperature, started at
1/0.07 and capped at 100), and the loss is the mean of the image->text and text->image cross-entropies.
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


def info_nce(images: torch.Tensor, texts: torch.Tensor, scale: torch.Tensor | float) -> torch.Tensor:
    """Symmetric InfoNCE over a batch of matched (image, text) rows."""
    logits = similarity(images, texts) * scale
    target = torch.arange(len(images), device=images.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2
