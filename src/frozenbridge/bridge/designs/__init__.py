"""The ways to connect a picture to the frozen language model, one file each, chosen by `shapes.connector.design`.

Every design is an nn.Module with `design` (its name), `n_out` (image tokens it puts in the sequence: 0 for
cross-attention), `n_params`, `config()` (its constructor's arguments, which a saved run keeps), `describe()` and
`forward(feats)`; a design that reads the picture from inside the language model instead (cross-attention) also has
`attach(decoder_layers)` and `reading(feats, has_media)`. A fifth design is one file here and one line in DESIGNS.
"""

from __future__ import annotations

from frozenbridge.bridge.connector import Connector
from frozenbridge.bridge.designs.codebook import Codebook
from frozenbridge.bridge.designs.cross_attention import CrossAttention
from frozenbridge.bridge.designs.resampler import Resampler

DESIGNS = {"mlp": Connector, "resampler": Resampler, "cross_attention": CrossAttention, "codebook": Codebook}


def rebuild(design: str, config: dict):
    """A design from a saved run's config (`config()` of the module that was saved)."""
    return DESIGNS[design](**config)
