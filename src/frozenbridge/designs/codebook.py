"""Design 4, codebook tokens: each merged patch becomes the id of its nearest entry in a codebook fitted once by
k-means over the cached training features (stage shapes_codebook, shapes/training/codebook.py), and the trained
part is one embedding a code (Chameleon's discrete picture tokens; at small scale, k-means over frozen features, as
speech units over HuBERT's).

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
from frozenbridge.bridge.design import SequenceDesign
from frozenbridge.core.errors import FrozenbridgeError


class Codebook(SequenceDesign):
    design = "codebook"

    @property
    def grid_tokens(self) -> tuple[int, str]:
        """Each token is one k x k block of patches, in the connector's order (the probes read it so)."""
        return self.k, self.order

    def __init__(self, feature_shape: list[int], out_dim: int, merge: int = 2, codes: int = 1024,
                 order: str = "columns", positions: bool = True, centroids: torch.Tensor | None = None,
                 embedding_lr: float | None = None):
        super().__init__()
        if len(feature_shape) != 3:
            raise ValueError("the codebook reads a grid of patch vectors (vision.features: patches)")
        rows, cols, width = feature_shape
        self.feature_shape, self.out_dim, self.k, self.order = list(feature_shape), out_dim, merge, order
        self.embedding_lr = embedding_lr
        self.grid = (rows, cols)
        self.n_out = -(-rows // merge) * -(-cols // merge)
        self.register_buffer("centroids", torch.zeros(codes, merge * merge * width) if centroids is None
                             else centroids.float().clone())
        self.embedding = nn.Embedding(codes, out_dim)
        self.positions = nn.Parameter(torch.zeros(self.n_out, out_dim)) if positions else None

    @classmethod
    def from_params(cls, k, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        if centroids is None:
            raise FrozenbridgeError("shapes.connector.design = codebook needs its codebook: run `dvc repro "
                                    "shapes_codebook` first")
        return cls(feature_shape, width, merge=k.merge, codes=k.codes, order=k.order, positions=k.positions,
                   centroids=centroids, embedding_lr=k.embedding_lr)

    def config(self) -> dict:
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "merge": self.k,
                "codes": self.embedding.num_embeddings, "order": self.order, "positions": self.positions is not None,
                "embedding_lr": self.embedding_lr}

    # n_params counts the trainable parameters only: the centroids are a buffer

    def param_groups(self, lr: float) -> list[dict]:
        """One group at the run's `lr`, or the codes' embeddings in a group of their own at `embedding_lr`."""
        if self.embedding_lr is None:
            return [{"params": list(self.parameters()), "lr": lr}]
        rest = [p for name, p in self.named_parameters() if not name.startswith("embedding.")]
        return [{"params": rest, "lr": lr}, {"params": list(self.embedding.parameters()), "lr": self.embedding_lr}]

    @torch.no_grad()
    def inside(self, feats: torch.Tensor) -> dict:
        """How many of its codes the pictures `feats` use (the codebook is fitted once, so this moves only with
        the pictures): distinct codes, and the share of all codes."""
        used = int(self.code_ids(feats).unique().numel())
        return {"codes_used": used, "codes_share": round(used / self.embedding.num_embeddings, 4)}

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


DESIGN = Codebook
