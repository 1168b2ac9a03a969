"""Design 2, learned queries: a fixed number of learned latents read the encoder's patch vectors through attention
and become the image tokens (OpenFlamingo's Perceiver Resampler, BLIP-2's Q-Former queries, Idefics2's pooling).

    patches (B, rows*cols, width) -> MLP to `width_inner` + a learned position per patch  = media
    latents (n, width_inner) -> attend to [media; latents] (separate LayerNorms for media and latents),
                                 then a feed-forward, each residual, a final LayerNorm
                              -> Linear to the language model's width: n image tokens

As in OpenFlamingo the keys and values are the media and the latents together; as in Idefics2 an MLP comes before
the resampler. Thin by design: one block, 4 heads of 64 and a feed-forward as wide as the block, so the trainable
parameters stay near the MLP connector's at the embedded backbones' sizes (a test holds them within 15%). The patch
positions are learned because a CNN's features barely say where they are and attention forgets order otherwise.
"""

from __future__ import annotations

import torch
from torch import nn


class Resampler(nn.Module):
    design = "resampler"
    grid_tokens = None  # its tokens are learned queries, each reading the whole picture: no place of it

    def __init__(self, feature_shape: list[int], out_dim: int, latents: int = 49, heads: int = 4,
                 head_dim: int = 64):
        super().__init__()
        if len(feature_shape) != 3:
            raise ValueError("the resampler reads a grid of patch vectors (vision.features: patches)")
        rows, cols, width = feature_shape
        inner = heads * head_dim
        self.feature_shape, self.out_dim, self.n_out = list(feature_shape), out_dim, latents
        self.heads, self.head_dim = heads, head_dim
        self.media_in = nn.Sequential(nn.Linear(width, inner), nn.GELU(), nn.Linear(inner, inner))
        self.media_positions = nn.Parameter(torch.zeros(rows * cols, inner))
        self.latents = nn.Parameter(torch.randn(latents, inner) * inner ** -0.5)
        self.norm_media, self.norm_latents = nn.LayerNorm(inner), nn.LayerNorm(inner)
        self.attention = nn.MultiheadAttention(inner, heads, batch_first=True)
        self.norm_ff = nn.LayerNorm(inner)
        self.feed_forward = nn.Sequential(nn.Linear(inner, inner), nn.GELU(), nn.Linear(inner, inner))
        self.norm_out = nn.LayerNorm(inner)
        self.out = nn.Linear(inner, out_dim)

    @classmethod
    def from_params(cls, c, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        return cls(feature_shape, width, latents=c.latents)

    def config(self) -> dict:
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "latents": self.n_out,
                "heads": self.heads, "head_dim": self.head_dim}

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, rows*cols, width) patch vectors -> (B, latents, out_dim) image tokens."""
        media = self.norm_media(self.media_in(feats) + self.media_positions)
        # a copy, not an expanded view: the FLOP counter's module hooks need every input to have a grad_fn
        latents = self.latents.repeat(feats.shape[0], 1, 1)
        queries = self.norm_latents(latents)
        context = torch.cat([media, queries], dim=1)
        attended, _ = self.attention(queries, context, context, need_weights=False)
        x = latents + attended
        x = x + self.feed_forward(self.norm_ff(x))
        return self.out(self.norm_out(x))

    def describe(self) -> str:
        rows, cols, _ = self.feature_shape
        return (f"resampler ({rows}x{cols} patches -> {self.n_out} learned queries of {self.out_dim}): "
                f"{self.n_params:,} trainable parameters")
