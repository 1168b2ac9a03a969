"""The only part that trains: encoder vectors in, language-model input embeddings out.

Patch features: each k x k block of neighbouring patches is concatenated into one vector (k^2 fewer tokens, k^2
times wider), then Linear -> GELU -> Linear to the language model's width. A grid that k does not divide (EfficientNet's
7 x 7 head with k = 2) is zero-padded at the bottom and right to the next multiple of k: no patch is dropped.
Pooled features: one vector -> MLP -> n prefix tokens.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

from frozenbridge.bridge.design import SequenceDesign
from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.connector")


def merge_patches(x: torch.Tensor, grid: tuple[int, int], k: int, order: str = "rows") -> torch.Tensor:
    """(B, rows*cols, C) in row-major order -> (B, ceil(rows/k)*ceil(cols/k), k*k*C).

    Each output token concatenates its block's patches in row-major order; tokens follow the blocks row by row
    (`order="rows"`) or column by column, left to right (`order="columns"`).
    """
    b, n, c = x.shape
    rows, cols = grid
    if n != rows * cols:
        raise ValueError(f"{n} tokens do not form a {rows}x{cols} grid")
    x = x.reshape(b, rows, cols, c)
    pad_r, pad_c = -rows % k, -cols % k
    if pad_r or pad_c:
        x = nn.functional.pad(x, (0, 0, 0, pad_c, 0, pad_r))  # zero rows at the bottom, zero columns at the right
    r, q = (rows + pad_r) // k, (cols + pad_c) // k
    x = x.reshape(b, r, k, q, k, c).permute(0, 1, 3, 2, 4, 5)  # (B, block row, block col, in-row, in-col, C)
    if order == "columns":
        x = x.transpose(1, 2)
    return x.reshape(b, r * q, k * k * c)


class MergedPatchMLP(SequenceDesign):
    """Merge k x k patches (or expand a pooled vector into prefix tokens), then a two-layer MLP: the reference's
    connector, design `mlp`, and the one every other study trains."""

    design = "mlp"

    @property
    def grid_tokens(self) -> tuple[int, str] | None:
        """How its tokens lie on the patch grid: each the k x k block (merge, order) of patches; None when pooled."""
        return None if self.pooled else (self.k, self.order)

    def __init__(self, feature_shape: list[int], out_dim: int, merge: int = 2, hidden: int | None = None,
                 prefix_tokens: int = 1, order: str = "rows", norm: bool = False, positions: bool = False,
                 init_scale: float = 1.0, key: str = "connector"):
        super().__init__()
        self.order, self.feature_shape = order, list(feature_shape)
        hidden = hidden or out_dim
        self.pooled = len(feature_shape) == 1
        if self.pooled:
            self.grid, self.k, self.n_out = None, 1, prefix_tokens
            in_dim, final = feature_shape[0], out_dim * prefix_tokens
        else:
            rows, cols, width = feature_shape
            if merge > min(rows, cols):
                raise FrozenbridgeError(f"params.yaml: {key}.merge = {merge} is not allowed for a {rows}x{cols} "
                                        f"feature grid; expected 1..{min(rows, cols)}")
            self.grid, self.k = (rows, cols), merge
            self.n_out = -(-rows // merge) * -(-cols // merge)
            in_dim, final = merge * merge * width, out_dim
        self.out_dim = out_dim
        self.norm = nn.LayerNorm(in_dim) if norm else None
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, final))
        self.positions = nn.Parameter(torch.zeros(self.n_out, out_dim)) if positions else None
        if init_scale != 1.0:
            with torch.no_grad():
                self.mlp[2].weight.mul_(init_scale)
                self.mlp[2].bias.mul_(init_scale)

    @classmethod
    def from_params(cls, k, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        """From params.yaml's shapes.connector.mlp (`k`), as every design is built (bridge/design.py)."""
        return cls(feature_shape, width, k.merge, k.hidden, k.prefix_tokens, k.order, k.norm, k.positions,
                   k.init_scale, key="shapes.connector.mlp")

    def config(self) -> dict:
        """The constructor's arguments that give this connector's shape (a saved run's config.json holds them)."""
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "merge": self.k,
                "hidden": self.mlp[0].out_features, "prefix_tokens": self.n_out if self.pooled else 1,
                "order": self.order, "norm": self.norm is not None, "positions": self.positions is not None}

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, tokens, width) encoder features -> (B, n_out, out_dim) image tokens."""
        x = feats[:, 0] if self.pooled else merge_patches(feats, self.grid, self.k, self.order)
        if self.norm is not None:
            x = self.norm(x)
        out = self.mlp(x).reshape(feats.shape[0], self.n_out, self.out_dim)
        return out if self.positions is None else out + self.positions

    def describe(self) -> str:
        shape = "pooled vector" if self.pooled else f"{self.grid[0]}x{self.grid[1]} grid, {self.k}x{self.k} merge"
        return f"connector ({shape} -> {self.n_out} tokens of {self.out_dim}): {self.n_params:,} trainable parameters"
