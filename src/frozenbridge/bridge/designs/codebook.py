"""Design 4, codebook tokens: each merged patch becomes the id of its nearest entry in a codebook fitted once by
k-means over the cached training features, and the trained part is one embedding a code (Chameleon's discrete
picture tokens; at small scale, k-means over frozen features, as speech units over HuBERT's).

    patches (B, rows*cols, width) -> k x k merge, as the MLP connector's -> nearest of `codes` centroids
                                  -> embedding of that code (+ a learned position per token): image tokens

The centroids are a buffer, not trained: a saved run carries them, so `load_run` rebuilds the design alone. No
gradient reaches the encoder side of the lookup; only the embeddings and positions learn: `codes` times the language
model's width, plus a position per token (tests/test_designs.py holds the default 1,024 codes within 15% of the MLP
connector's parameters at the embedded sizes).
"""

from __future__ import annotations

import torch
from torch import nn

from frozenbridge.bridge.connector import merge_patches
from frozenbridge.core.errors import FrozenbridgeError


def fit_codebook(vectors: torch.Tensor, codes: int, seed: int, iterations: int = 25) -> torch.Tensor:
    """(codes, width) centroids: k-means++ seeding from a seeded generator, then Lloyd's iterations, in fp32 on the
    CPU so the same vectors and seed give the same codebook. An emptied cluster takes the vector farthest from its
    centroid."""
    x = vectors.float()
    if len(x) < codes:
        raise ValueError(f"{len(x)} vectors cannot fit {codes} codes")
    gen = torch.Generator().manual_seed(seed)
    centroids = x[torch.randint(len(x), (1,), generator=gen)]
    nearest = torch.cdist(x, centroids).squeeze(1) ** 2
    for _ in range(codes - 1):  # k-means++: each next seed drawn with probability proportional to squared distance
        pick = torch.multinomial(nearest / nearest.sum(), 1, generator=gen)
        centroids = torch.cat([centroids, x[pick]])
        nearest = torch.minimum(nearest, ((x - x[pick]) ** 2).sum(-1))
    for _ in range(iterations):
        distances = torch.cdist(x, centroids)
        assign = distances.argmin(1)
        sums = torch.zeros_like(centroids).index_add_(0, assign, x)
        counts = torch.bincount(assign, minlength=codes)
        empty = counts == 0
        centroids = torch.where(empty[:, None], centroids, sums / counts.clamp(min=1)[:, None])
        if empty.any():
            far = distances.gather(1, assign[:, None]).squeeze(1).topk(int(empty.sum())).indices
            centroids[empty] = x[far]
    return centroids


class Codebook(nn.Module):
    design = "codebook"

    @property
    def grid_tokens(self) -> tuple[int, str]:
        """Each token is one k x k block of patches, in the connector's order (the probes read it so)."""
        return self.k, self.order

    def __init__(self, feature_shape: list[int], out_dim: int, merge: int = 2, codes: int = 1024,
                 order: str = "columns", positions: bool = True, centroids: torch.Tensor | None = None):
        super().__init__()
        if len(feature_shape) != 3:
            raise ValueError("the codebook reads a grid of patch vectors (vision.features: patches)")
        rows, cols, width = feature_shape
        self.feature_shape, self.out_dim, self.k, self.order = list(feature_shape), out_dim, merge, order
        self.grid = (rows, cols)
        self.n_out = -(-rows // merge) * -(-cols // merge)
        self.register_buffer("centroids", torch.zeros(codes, merge * merge * width) if centroids is None
                             else centroids.float().clone())
        self.embedding = nn.Embedding(codes, out_dim)
        self.positions = nn.Parameter(torch.zeros(self.n_out, out_dim)) if positions else None

    @classmethod
    def from_params(cls, c, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        if centroids is None:
            raise FrozenbridgeError("shapes.connector.design = codebook needs its codebook: run `dvc repro "
                                    "shapes_codebook` first")
        return cls(feature_shape, width, merge=c.merge, codes=c.codes, order=c.order, positions=c.positions,
                   centroids=centroids)

    def config(self) -> dict:
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "merge": self.k,
                "codes": self.embedding.num_embeddings, "order": self.order, "positions": self.positions is not None}

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # trainable only: the centroids are a buffer

    def code_ids(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, n_out) the nearest code of each merged patch."""
        merged = merge_patches(feats.float(), self.grid, self.k, self.order)
        return torch.cdist(merged, self.centroids.expand(len(merged), -1, -1)).argmin(-1)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, rows*cols, width) patch vectors -> (B, n_out, out_dim) image tokens."""
        out = self.embedding(self.code_ids(feats))
        return out if self.positions is None else out + self.positions

    def describe(self) -> str:
        rows, cols = self.grid
        return (f"codebook ({rows}x{cols} grid, {self.k}x{self.k} merge -> {self.n_out} codes of "
                f"{self.embedding.num_embeddings:,}, embeddings of {self.out_dim}): {self.n_params:,} trainable "
                "parameters")
