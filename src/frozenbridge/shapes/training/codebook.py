"""The codebook design's centroids (designs/codebook.py): fitted once by stage shapes_codebook over the cached
training features, read by every training run of that design.

data/shapes/codebook/ holds centroids.pt and codebook.json (codes, merge, order, seed, how many vectors were fitted)
where shapes.connector.design is codebook, and codebook.json alone, saying there is none, for every other design: the
same bytes whatever the other connector params say, so no other design's training reruns for it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from frozenbridge.bridge.connector import merge_patches
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.training.split_data import SplitData

CENTROIDS = "centroids.pt"
INFO = "codebook.json"
NONE = {"centroids": None, "why": "shapes.connector.design is not codebook"}


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


def fitted_on(params: Params) -> dict:
    """The params a codebook is fitted under: a run refuses centroids fitted under others."""
    c = params.shapes.connector.codebook
    return {"codes": c.codes, "merge": c.merge, "order": c.order, "seed": params.seed}


def write_codebook(params: Params, data: SplitData | None, out: Path) -> None:
    """k-means over the training features' merged patches (k x k, as the design merges them) into `codes`
    centroids, seeded by `seed` alone (every replicate fits with the same codebook), written to `out`; `data` (the
    training split) may be None for any other design."""
    c = params.shapes.connector.codebook
    with atomic_path(out) as tmp:
        tmp.mkdir()
        if params.shapes.connector.design != "codebook":
            write_json(tmp / INFO, NONE)
            return
        rows, cols = data.meta["output_shape"][:2]
        merged = merge_patches(data.feats.float(), (rows, cols), c.merge, c.order)
        vectors = merged.reshape(-1, merged.shape[-1])
        if len(vectors) < c.codes:
            raise FrozenbridgeError(f"shapes.connector.codebook.codes = {c.codes}: the training features hold only "
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
        raise FrozenbridgeError(f"{folder}: no codebook fitted under these params (shapes.connector.codebook's "
                                "codes, merge and order, and seed); run `dvc repro shapes_codebook` first")
    return torch.load(Path(folder) / CENTROIDS)
