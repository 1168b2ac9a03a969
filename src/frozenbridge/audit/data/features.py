"""The folder's pictures through the frozen encoder once, into the feature cache's Parquet format: train.parquet and
test.parquet (one row a picture, in the order of its metadata.jsonl, with its file_name) and blank.parquet (the
white picture of the controls, at the encoder's input size).

The features are what every later step reads, so the folder is read and checked first, and each file records the
pictures it holds: a feature file that no longer matches the folder (a picture added, a row moved) is refused by
`load_features` with one line saying to encode again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from PIL import Image

from frozenbridge.audit.data.folder import SPLITS, AuditFolder, AuditSplit
from frozenbridge.audit.params import Params
from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.backbones.hub import file_digest
from frozenbridge.core.backbones.vision import VisionEncoder, load_vision
from frozenbridge.core.device import pick_device
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import load_feature_tensor, write_features

log = logging.getLogger("frozenbridge.audit")
FILE_NAME = (pa.field("file_name", pa.string()),)
STAGE = "audit_encode"


def listing(split: AuditSplit) -> list[str]:
    """The split's pictures, in row order, as the feature file records them."""
    return [p.file_name for p in split.pictures]


def pictures_digest(split: AuditSplit) -> str:
    """A digest of the split's picture files in row order: the features are of these bytes."""
    return file_digest(*(p.path for p in split.pictures))


def _batches(split: AuditSplit, size: int) -> Iterator[tuple[np.ndarray, list[Image.Image], dict]]:
    for start in range(0, split.n_pictures, size):
        part = split.pictures[start:start + size]
        images = []
        for p in part:
            with Image.open(p.path) as im:
                images.append(im.convert("RGB"))
        yield np.arange(start, start + len(part)), images, {"file_name": [p.file_name for p in part]}


def white_picture(size: int) -> Image.Image:
    """The blank picture of the controls: a white square, the shapes study's blank too."""
    return Image.new("RGB", (size, size), "white")


def encode_folder(encoder: VisionEncoder, folder: AuditFolder, out: Path, dtype: str, batch_size: int,
                  image_size: int) -> dict:
    """Write out/{train,test,blank}.parquet atomically (out appears whole or not at all); returns the metadata."""
    tokens = encoder.grid[0] * encoder.grid[1] if encoder.grid else 1
    base = {**encoder.metadata(), "tokens": tokens}
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        for name in SPLITS:
            split = getattr(folder, name)
            meta = {**base, "split": name, "pictures": split.n_pictures, "digest": pictures_digest(split)}
            batches = ((ids, encoder.encode(images), cols) for ids, images, cols in _batches(split, batch_size))
            write_features(tmp / f"{name}.parquet", batches, split.n_pictures, dtype, meta, f"encode {name}",
                           extra=FILE_NAME)
        white = white_picture(image_size)
        write_features(tmp / "blank.parquet", iter([(np.array([0]), encoder.encode([white]), {"file_name": [""]})]),
                       1, dtype, {**base, "split": "blank", "pictures": 1}, "encode blank", extra=FILE_NAME)
    return base


@dataclass
class AuditFeatures:
    train: torch.Tensor  # (pictures, tokens, width), row i = the split's picture i
    test: torch.Tensor
    blank: torch.Tensor  # (1, tokens, width)
    meta: dict  # the encoder's metadata (name, revision, features, layer, grid, width, tokens, output_shape)

    @property
    def grid(self) -> tuple[int, int] | None:
        grid = self.meta.get("grid")
        return tuple(grid) if grid else None


def load_features(directory: Path, folder: AuditFolder, params: Params) -> AuditFeatures:
    """The cached features of `folder`, checked to be of its pictures, in its order, by params.yaml's encoder."""
    v = params.vision
    want = {"encoder": v.name, "features": v.features, "layer": v.layer, "image_size": params.audit.image_size}
    tensors, meta = {}, {}
    for name in (*SPLITS, "blank"):
        path = Path(directory) / f"{name}.parquet"
        if not path.is_file():
            raise FrozenbridgeError(f"{path}: no such feature file; encode the folder first (`dvc repro {STAGE}`, "
                                    "or `frozenbridge audit`, which encodes it)")
        _, tensors[name], meta = load_feature_tensor(path, STAGE)
        made = {k: meta.get(k) for k in want}
        if made["encoder"] == v.name and v.name != "efficientnet-lite0":
            made["image_size"] = want["image_size"]  # transformers encoders use their own processor's size
        if made != want:
            raise FrozenbridgeError(f"{path}: made with {made}, but params.yaml asks for {want}; encode the folder "
                                    f"again (`dvc repro {STAGE}`)")
        if name in SPLITS:
            split = getattr(folder, name)
            names = pq.read_table(path, columns=["file_name"]).column("file_name").to_pylist()
            if names != listing(split) or meta.get("digest") != pictures_digest(split):
                raise FrozenbridgeError(f"{path}: encoded from other pictures than {split.metadata} names now; "
                                        f"encode the folder again (`dvc repro {STAGE}`)")
    return AuditFeatures(tensors["train"], tensors["test"], tensors["blank"], meta)


def encode(params: Params, folder: AuditFolder, out: Path) -> dict:
    """Encode the folder with params.yaml's vision encoder into `out` (the audit_encode stage; `frozenbridge
    audit`)."""
    v = params.vision
    encoder = load_vision(v.name, v.features, v.layer, params.audit.image_size).to(pick_device(params.device))
    meta = encode_folder(encoder, folder, out, v.dtype, v.batch_size, params.audit.image_size)
    log.info("audit: encoded %d training and %d test pictures with %s", folder.train.n_pictures,
             folder.test.n_pictures, meta["encoder"])
    return meta
