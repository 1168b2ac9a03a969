"""The ways to connect a picture to the frozen language model, one file each, chosen by `shapes.connector.design`.

Every design is an nn.Module with `design` (its name), `n_out` (image tokens it puts in the sequence: 0 for
cross-attention), `n_params`, `config()` (its constructor's arguments, which a saved run keeps), `describe()`,
`forward(feats)` and a classmethod `from_params(connector_params, feature_shape, width, layers, centroids)`; a design
that reads the picture from inside the language model (cross-attention) also has `attach(decoder_layers)` and
`reading(feats, has_media)`. A fifth design is one file here and one line in DESIGNS. The registry names classes as
strings, so params validation knows the names without importing torch.
"""

from __future__ import annotations

import importlib

DESIGNS = {
    "mlp": "frozenbridge.bridge.connector:Connector",
    "resampler": "frozenbridge.bridge.designs.resampler:Resampler",
    "cross_attention": "frozenbridge.bridge.designs.cross_attention:CrossAttention",
    "codebook": "frozenbridge.bridge.designs.codebook:Codebook",
}


def design_class(design: str):
    module, name = DESIGNS[design].split(":")
    return getattr(importlib.import_module(module), name)


def rebuild(design: str, config: dict):
    """A design from a saved run's config (`config()` of the module that was saved)."""
    return design_class(design)(**config)
