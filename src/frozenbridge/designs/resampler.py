"""Design 2, learned queries: a fixed number of learned latents read the encoder's patch vectors through attention
and become the image tokens (OpenFlamingo's Perceiver Resampler, BLIP-2's Q-Former queries, Idefics2's pooling).

    patches (B, rows*cols, width) -> MLP to `width_inner` + a learned position per patch  = media
    latents (n, width_inner) -> `depth` blocks: attend to [media; latents] (separate LayerNorms for media and
                                 latents), then a feed-forward, each residual; a final LayerNorm
                              -> Linear to the language model's width: n image tokens

As in OpenFlamingo the keys and values are the media and the latents together; as in Idefics2 an MLP comes before
the resampler. Thin by design: one block (`depth: 1`), 4 heads of 64 and a feed-forward as wide as the block, so
the trainable parameters stay near the MLP connector's at the embedded backbones' sizes (a test holds them within
15%). The patch positions are learned because a CNN's features barely say where they are and attention forgets
order otherwise. The queries start as Gaussian draws of spread `query_scale`/sqrt(width). `inside` gives how
spread each query's attention is over the patches (its entropy over them, as a share of the most a spread over
every patch can have).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from frozenbridge.bridge.design import SequenceDesign


class ResamplerBlock(nn.Module):
    """The latents attend to the media and themselves, then a feed-forward; each residual."""

    def __init__(self, inner: int, heads: int):
        super().__init__()
        self.norm_media, self.norm_latents = nn.LayerNorm(inner), nn.LayerNorm(inner)
        self.attention = nn.MultiheadAttention(inner, heads, batch_first=True)
        self.norm_ff = nn.LayerNorm(inner)
        self.feed_forward = nn.Sequential(nn.Linear(inner, inner), nn.GELU(), nn.Linear(inner, inner))

    def forward(self, latents: torch.Tensor, media: torch.Tensor, weights: bool = False):
        """(latents updated, and with `weights` each head's attention of each latent over [media; latents])."""
        queries = self.norm_latents(latents)
        context = torch.cat([self.norm_media(media), queries], dim=1)
        attended, attention = self.attention(queries, context, context, need_weights=weights,
                                             average_attn_weights=False)
        x = latents + attended
        return x + self.feed_forward(self.norm_ff(x)), attention


class Resampler(SequenceDesign):
    design = "resampler"
    grid_tokens = None  # its tokens are learned queries, each reading the whole picture: no place of it

    def __init__(self, feature_shape: list[int], out_dim: int, latents: int = 49, heads: int = 4,
                 head_dim: int = 64, depth: int = 1, query_scale: float = 1.0):
        super().__init__()
        if len(feature_shape) != 3:
            raise ValueError("the resampler reads a grid of patch vectors (vision.features: patches)")
        rows, cols, width = feature_shape
        inner = heads * head_dim
        self.feature_shape, self.out_dim, self.n_out = list(feature_shape), out_dim, latents
        self.heads, self.head_dim, self.depth, self.query_scale = heads, head_dim, depth, query_scale
        self.media_in = nn.Sequential(nn.Linear(width, inner), nn.GELU(), nn.Linear(inner, inner))
        self.media_positions = nn.Parameter(torch.zeros(rows * cols, inner))
        self.latents = nn.Parameter(torch.randn(latents, inner) * inner ** -0.5 * query_scale)
        self.blocks = nn.ModuleList(ResamplerBlock(inner, heads) for _ in range(depth))
        self.norm_out = nn.LayerNorm(inner)
        self.out = nn.Linear(inner, out_dim)

    @classmethod
    def from_params(cls, k, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        return cls(feature_shape, width, latents=k.latents, heads=k.heads, head_dim=k.head_dim, depth=k.depth,
                   query_scale=k.query_scale)

    def config(self) -> dict:
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "latents": self.n_out,
                "heads": self.heads, "head_dim": self.head_dim, "depth": self.depth, "query_scale": self.query_scale}

    def _media(self, feats: torch.Tensor) -> torch.Tensor:
        return self.media_in(feats) + self.media_positions

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, rows*cols, width) patch vectors -> (B, latents, out_dim) image tokens."""
        media = self._media(feats)
        # a copy, not an expanded view: the FLOP counter's module hooks need every input to have a grad_fn
        x = self.latents.repeat(feats.shape[0], 1, 1)
        for block in self.blocks:
            x, _ = block(x, media)
        return self.out(self.norm_out(x))

    @torch.no_grad()
    def inside(self, feats: torch.Tensor) -> dict:
        """How spread each query's attention is over the patches, at the last block: the entropy of its attention
        over the patches alone (renormalised), as a share of log(patches), the most (1: every patch alike, 0: one
        patch), averaged over heads and pictures; and the share of its attention on the patches rather than on the
        queries."""
        media = self._media(feats)
        x = self.latents.repeat(feats.shape[0], 1, 1)
        for block in self.blocks:
            x, attention = block(x, media, weights=True)
        patches = media.shape[1]
        on = attention[..., :patches]  # (B, heads, latents, patches)
        mass = on.sum(-1)
        p = on / mass.clamp(min=1e-12).unsqueeze(-1)
        entropy = -(p * p.clamp(min=1e-12).log()).sum(-1) / math.log(patches)
        return {"query_entropy": [round(float(v), 4) for v in entropy.mean((0, 1))],
                "on_patches": round(float(mass.mean()), 4)}

    def describe(self) -> str:
        rows, cols, _ = self.feature_shape
        return (f"resampler ({rows}x{cols} patches -> {self.n_out} learned queries of {self.out_dim}, depth "
                f"{self.depth}): {self.n_params:,} trainable parameters")


DESIGN = Resampler
