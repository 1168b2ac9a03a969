"""The trainable parts: a linear projection of the picture's pooled vector, and a text tower per kind.

adaptor: cached frozen-LM vector -> Linear -> GELU -> Linear (LLM2CLIP's frozen LM + adaptor).
linear: cached frozen-LM vector -> Linear (the no-adaptor baseline).
scratch: the caption's tokens -> a small transformer trained from nothing -> mean -> Linear (CLIP's own kind of
text tower, at a size this data can train).
vision_text: the vision model's own cached text-tower vector -> Linear (CLIP's or SigLIP's text tower).

Each tower holds the table of every text it can embed and is called with row indices, so training and evaluation
index the same cache. Cached vectors are standardized with the training texts' mean and spread.
"""

from __future__ import annotations

import torch
from torch import nn

FEATURE_TOWERS = ("adaptor", "linear", "vision_text")


class Standardize(nn.Module):
    def __init__(self, fit_on: torch.Tensor):
        super().__init__()
        self.register_buffer("mean", fit_on.mean(0))
        self.register_buffer("std", fit_on.std(0).clamp_min(1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


class ImageProjection(nn.Module):
    """The picture side: the frozen encoder's features averaged over the grid (done once, outside), standardized,
    one linear map into the shared space."""

    def __init__(self, train_vectors: torch.Tensor, dim: int):
        super().__init__()
        self.standardize = Standardize(train_vectors)
        self.proj = nn.Linear(train_vectors.shape[1], dim)

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        return self.proj(self.standardize(vectors))


class FeatureTower(nn.Module):
    """Cached text vectors (a frozen model's) -> standardized -> Linear, or Linear -> GELU -> Linear with `hidden`."""

    def __init__(self, table: torch.Tensor, train_rows: torch.Tensor, dim: int, hidden: int | None):
        super().__init__()
        self.register_buffer("table", table.float(), persistent=False)
        self.standardize = Standardize(self.table[train_rows])
        width = table.shape[1]
        self.net = nn.Linear(width, dim) if hidden is None else nn.Sequential(
            nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        return self.net(self.standardize(self.table[rows]))


def token_table(tokens: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, int]:
    """(ids (texts, longest) in a compact vocabulary with 0 = padding, mask, vocabulary size)."""
    vocab = {t: i + 1 for i, t in enumerate(sorted({t for seq in tokens for t in seq}))}
    longest = max(len(seq) for seq in tokens)
    ids = torch.zeros(len(tokens), longest, dtype=torch.long)
    for row, seq in enumerate(tokens):
        ids[row, :len(seq)] = torch.tensor([vocab[t] for t in seq])
    return ids, ids != 0, len(vocab) + 1


class ScratchTower(nn.Module):
    """A small bidirectional transformer over the caption's tokens (the frozen LM's tokenizer, a compact vocabulary
    of the ids the study's texts use), trained from random weights; the mean of its outputs, then a Linear."""

    def __init__(self, tokens: list[list[int]], dim: int, width: int, layers: int, heads: int):
        super().__init__()
        ids, mask, vocab = token_table(tokens)
        self.register_buffer("ids", ids, persistent=False)
        self.register_buffer("mask", mask, persistent=False)
        self.embed = nn.Embedding(vocab, width, padding_idx=0)
        self.position = nn.Parameter(torch.randn(ids.shape[1], width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, dim)

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        ids, mask = self.ids[rows], self.mask[rows]
        x = self.embed(ids) + self.position[: ids.shape[1]]
        x = self.norm(self.encoder(x, src_key_padding_mask=~mask))
        m = mask[..., None].float()
        return self.out((x * m).sum(1) / m.sum(1))


def trainable(*modules: nn.Module) -> int:
    return sum(p.numel() for m in modules for p in m.parameters() if p.requires_grad)
