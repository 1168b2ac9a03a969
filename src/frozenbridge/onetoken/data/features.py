"""A captioned folder's pictures through the frozen encoder once, into the feature cache's Parquet format (one row a
picture: id, its pooled vector as a 1 x width tensor, its file, its captions, the metadata's other columns)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from PIL import Image

from frozenbridge.core.backbones.vision import VisionEncoder
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import load_feature_tensor, write_features
from frozenbridge.onetoken.data.folder import Picture

EXTRA = (pa.field("file_name", pa.string()), pa.field("captions", pa.list_(pa.string())),
         pa.field("extra", pa.string()))


def _batches(pictures: list[Picture], size: int):
    for start in range(0, len(pictures), size):
        part = pictures[start:start + size]
        images = []
        for p in part:
            with Image.open(p.path) as im:
                images.append(im.convert("RGB"))
        columns = {"file_name": [str(p.path) for p in part], "captions": [list(p.captions) for p in part],
                   "extra": [json.dumps(p.extra, sort_keys=True) for p in part]}
        yield np.arange(start, start + len(part)), images, columns


def encode_pictures(encoder: VisionEncoder, pictures: list[Picture], path: Path, batch_size: int,
                    folder: str, desc: str) -> dict:
    """Encode `pictures` (pooled: one vector each) into `path`, written atomically; returns its metadata."""
    if encoder.features != "pooled":
        raise FrozenbridgeError(f"the one-token study encodes pooled vectors, not {encoder.features!r}")
    meta = {**encoder.metadata(), "tokens": 1, "folder": folder, "pictures": len(pictures)}
    batches = ((ids, encoder.encode(images), columns) for ids, images, columns in _batches(pictures, batch_size))
    write_features(path, batches, len(pictures), "float32", meta, desc, extra=EXTRA)
    return {**meta, "dtype": "float32"}


@dataclass
class PictureFeatures:
    feats: torch.Tensor  # (pictures, 1, width) float32
    files: list[str]
    captions: list[list[str]]
    extra: list[dict]
    meta: dict

    def __len__(self) -> int:
        return len(self.files)


def load_pictures(path: str | Path, encoder: str) -> PictureFeatures:
    """A split's cached pooled vectors with their captions; refused when another encoder made them."""
    _, feats, meta = load_feature_tensor(path, "onetoken_encode")
    if meta.get("encoder") != encoder or meta.get("features") != "pooled":
        raise FrozenbridgeError(f"{path}: made with encoder {meta.get('encoder')!r} ({meta.get('features')}), but "
                                f"params.yaml has onetoken.encoder.name = {encoder!r}; rerun `dvc repro "
                                "onetoken_encode`")
    table = pq.read_table(path, columns=[f.name for f in EXTRA])
    return PictureFeatures(feats.float(), table.column("file_name").to_pylist(), table.column("captions").to_pylist(),
                           [json.loads(e) for e in table.column("extra").to_pylist()], meta)
