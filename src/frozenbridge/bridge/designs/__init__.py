"""The ways to connect a picture to the frozen language model, one file each, chosen by `shapes.connector.design`.

Every design is an nn.Module with `design` (its name), `n_out` (image tokens it puts in the sequence: 0 for
cross-attention), `n_params`, `config()` (its constructor's arguments, which a saved run keeps), `describe()`,
`grid_tokens` (how `forward`'s tokens lie on the patch grid, (merge, order), or None), `forward(feats)` and a
classmethod `from_params(connector_params, feature_shape, width, layers, centroids)`; a design
that reads the picture from inside the language model (cross-attention) also has `attach(decoder_layers)` and
`reading(feats, has_media)`. A fifth design is one file here, one line in `design_class` and its name in
shapes.connector.design's choices (shapes/params.py; a test keeps the two lists equal, so that params validation,
which every stage runs, imports no design and no torch).
"""

from __future__ import annotations


def design_class(design: str):
    """The class of the design named by `shapes.connector.design`."""
    from frozenbridge.bridge.connector import Connector
    from frozenbridge.bridge.designs.codebook import Codebook
    from frozenbridge.bridge.designs.cross_attention import CrossAttention
    from frozenbridge.bridge.designs.resampler import Resampler

    return {"mlp": Connector, "resampler": Resampler, "cross_attention": CrossAttention, "codebook": Codebook}[design]


def rebuild(design: str, config: dict):
    """A design from a saved run's config (`config()` of the module that was saved)."""
    return design_class(design)(**config)
