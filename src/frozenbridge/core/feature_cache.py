"""Cached frozen features in Parquet: one row a picture, the token grid kept as a fixed-shape tensor column.

Files are written a batch (one row group) at a time, so memory is bounded by the batch, and carry the encoder's
name, revision and output shape in their metadata so a reader can refuse features from another encoder.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from PIL import Image
from tqdm import tqdm

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.backbones.vision import VisionEncoder
from frozenbridge.core.errors import FrozenbridgeError

META_KEY = b"frozenbridge"
NUMPY_DTYPES = {"float16": np.float16, "float32": np.float32}
ARROW_DTYPES = {"float16": pa.float16(), "float32": pa.float32()}


def _feature_type(dtype: str, tokens: int, width: int) -> pa.DataType:
    # bfloat16 has no Arrow type: it is stored as its 16 raw bits (uint16) and viewed back on read
    value = pa.uint16() if dtype == "bfloat16" else ARROW_DTYPES[dtype]
    return pa.fixed_shape_tensor(value, (tokens, width))


def _to_numpy(x: torch.Tensor, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return x.to(torch.bfloat16).view(torch.uint16).numpy()
    return x.numpy().astype(NUMPY_DTYPES[dtype])


def decode_png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def write_features(path: Path, batches: Iterator[tuple[np.ndarray, torch.Tensor, dict]], total: int, dtype: str,
                   meta: dict, desc: str, unit: str = "pic", extra: tuple[pa.Field, ...] = ()) -> None:
    """Stream (ids, features (rows, tokens, width), {extra column: values}) batches into `path`, written atomically,
    one row group a batch, with `meta` (which must give `tokens` and `width`) in the schema."""
    schema = pa.schema([("id", pa.int32()), ("features", _feature_type(dtype, meta["tokens"], meta["width"])),
                        *extra])
    schema = schema.with_metadata({META_KEY: json.dumps({**meta, "dtype": dtype}, sort_keys=True).encode()})
    # The features column plainly encoded: Parquet's default dictionary never fills up on 16-bit values (there are
    # only 65,536), so every value would be stored as a dictionary index, and reading the shapes study's training
    # features took 0.72 s against 0.17 s plain, in every stage that trains (bench: startup).
    plain = [name for name in schema.names if name != "features"]
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema, use_dictionary=plain) as writer, \
            tqdm(total=total, desc=desc, unit=unit) as bar:
        for ids, feats, columns in batches:
            column = pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(_to_numpy(feats, dtype)))
            arrays = [pa.array(ids, pa.int32()), column] + [pa.array(columns[f.name], f.type) for f in extra]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            bar.update(len(ids))


def encode_images(encoder: VisionEncoder, batches: Iterator[tuple[np.ndarray, list[Image.Image]]], total: int,
                  path: Path, dtype: str, extra_meta: dict, desc: str) -> dict:
    """Encode (ids, pictures) batches and stream them into `path` (written atomically); returns its metadata."""
    tokens = encoder.grid[0] * encoder.grid[1] if encoder.grid else 1
    meta = {**encoder.metadata(), "dtype": dtype, "tokens": tokens, **extra_meta}
    write_features(path, ((ids, encoder.encode(images), {}) for ids, images in batches), total, dtype, meta, desc)
    return meta


def picture_batches(parquet: Path, batch_size: int) -> Iterator[tuple[np.ndarray, list[Image.Image]]]:
    """Stream (ids, decoded pictures) from a shapes Parquet file without loading it whole."""
    for batch in pq.ParquetFile(parquet).iter_batches(batch_size=batch_size, columns=["id", "png"]):
        yield batch.column("id").to_numpy(), [decode_png(b) for b in batch.column("png").to_pylist()]


def _rerun(stage: str) -> str:
    return f"rerun `dvc repro -f {stage}`" if stage else "rerun the stage that writes it (`dvc repro -f STAGE`)"


def read_metadata(path: str | Path, stage: str = "") -> dict:
    """The cache's metadata; `stage` (the stage that writes the file) names the fix in the error line."""
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise FrozenbridgeError(f"{path}: not a readable Parquet file ({err}); {_rerun(stage)}") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise FrozenbridgeError(f"{path}: no frozenbridge feature metadata; {_rerun(stage)}")
    return json.loads(raw)


def check_features(meta: dict, path: Path, name: str, features: str, layer: int | None, stage: str,
                   key: str = "vision") -> None:
    """Refuse a cache made by another encoder, feature kind or layer than the params name (`key` is their section,
    `stage` the stage that writes the cache)."""
    for field, want in (("encoder", name), ("features", features), ("layer", layer)):
        if meta.get(field) != want:
            raise FrozenbridgeError(f"{path}: features were made with {field} = {meta.get(field)!r} but params.yaml "
                                    f"has {key}.{field if field != 'encoder' else 'name'} = {want!r}; rerun `dvc repro "
                                    f"{stage}`")


def load_feature_tensor(path: str | Path, stage: str = "") -> tuple[np.ndarray, torch.Tensor, dict]:
    """(ids, features as a torch tensor in their stored dtype, shape (rows, tokens, width), metadata); `stage` is the
    stage that writes the file, named in the error line when it is unreadable.

    Kept in the stored dtype (fp16 by default) so a large training set stays small in memory; the connector
    casts each batch to float32.
    """
    meta = read_metadata(path, stage)
    try:
        table = pq.read_table(path)
        column = table.column("features")
        # one copy, row group by row group, into an array torch may own (Arrow's buffers are read-only)
        feats = (np.concatenate([chunk.to_numpy_ndarray() for chunk in column.chunks]) if column.num_chunks
                 else np.array(column.combine_chunks().to_numpy_ndarray(), copy=True))
    except (OSError, pa.ArrowInvalid, KeyError) as err:
        raise FrozenbridgeError(f"{path}: unreadable feature file ({err}); {_rerun(stage)}") from None
    tensor = torch.from_numpy(feats)
    if meta["dtype"] == "bfloat16":
        tensor = tensor.view(torch.int16).view(torch.bfloat16)
    expected = (meta["tokens"], meta["width"])
    if tuple(tensor.shape[1:]) != expected:
        raise FrozenbridgeError(f"{path}: features of shape {tuple(tensor.shape[1:])}, but its metadata says "
                                f"{expected}; {_rerun(stage)}")
    return table.column("id").to_numpy(), tensor, meta


def read_features(path: str | Path, stage: str = "") -> tuple[np.ndarray, np.ndarray, dict]:
    """(ids, features as float32 numpy of shape (rows, tokens, width), metadata)."""
    ids, tensor, meta = load_feature_tensor(path, stage)
    return ids, tensor.float().numpy(), meta
