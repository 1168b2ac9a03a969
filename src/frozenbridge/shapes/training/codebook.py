"""The codebook design's centroids (bridge/designs/codebook.py): fitted once by stage shapes_codebook over the cached
training features, read by every training run of that design.

data/shapes/codebook/ holds centroids.pt and codebook.json (codes, merge, order, seed, how many vectors were fitted)
where shapes.connector.design is codebook, and codebook.json alone, saying there is none, for every other design: the
same bytes whatever the other connector params say, so no other design's training reruns for it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from frozenbridge.bridge.connector import merge_patches
from frozenbridge.bridge.designs.codebook import fit_codebook
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.training.split_data import SplitData

CENTROIDS = "centroids.pt"
INFO = "codebook.json"
NONE = {"centroids": None, "why": "shapes.connector.design is not codebook"}


def fitted_on(params: Params) -> dict:
    """The params a codebook is fitted under: a run refuses centroids fitted under others."""
    c = params.shapes.connector
    return {"codes": c.codes, "merge": c.merge, "order": c.order, "seed": params.seed}


def write_codebook(params: Params, data: SplitData | None, out: Path) -> None:
    """k-means over the training features' merged patches (k x k, as the design merges them) into `codes`
    centroids, seeded by `seed` alone (every replicate fits with the same codebook), written to `out`; `data` (the
    training split) may be None for any other design."""
    c = params.shapes.connector
    with atomic_path(out) as tmp:
        tmp.mkdir()
        if c.design != "codebook":
            write_json(tmp / INFO, NONE)
            return
        rows, cols = data.meta["output_shape"][:2]
        merged = merge_patches(data.feats.float(), (rows, cols), c.merge, c.order)
        vectors = merged.reshape(-1, merged.shape[-1])
        if len(vectors) < c.codes:
            raise FrozenbridgeError(f"shapes.connector.codes = {c.codes}: the training features hold only "
                                    f"{len(vectors)} merged patches; allowed: at most that many codes")
        torch.save(fit_codebook(vectors, c.codes, params.seed), tmp / CENTROIDS)
        write_json(tmp / INFO, {"centroids": CENTROIDS, **fitted_on(params), "vectors": len(vectors)})


def read_centroids(params: Params, folder: Path) -> torch.Tensor | None:
    """The codebook's centroids where the design is codebook (None otherwise); one line when `folder` holds none
    fitted under these params."""
    if params.shapes.connector.design != "codebook":
        return None
    info = read_json_if_present(Path(folder) / INFO) or NONE
    if info["centroids"] is None or any(info.get(k) != v for k, v in fitted_on(params).items()):
        raise FrozenbridgeError(f"{folder}: no codebook fitted under these params (shapes.connector.codes, merge, "
                                "order and seed); run `dvc repro shapes_codebook` first")
    return torch.load(Path(folder) / CENTROIDS)
