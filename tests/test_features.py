"""Feature files: shapes preserved, metadata recorded, written a batch at a time, dtypes round-trip."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from PIL import Image

from frozenbridge.core.backbones import load_vision
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import encode_images, read_features, read_metadata

COLORS = ["white", "red", "green", "blue", "yellow", "purple", "orange"]


def batches(size: int):
    pics = [Image.new("RGB", (48, 48), c) for c in COLORS]
    for i in range(0, len(pics), size):
        yield np.arange(i, min(i + size, len(pics))), pics[i:i + size]


@pytest.mark.parametrize("dtype, tol", [("float16", 1e-2), ("bfloat16", 5e-2), ("float32", 0)])
def test_features_round_trip(tiny_models, tmp_path, dtype, tol):
    enc = load_vision(name=str(tiny_models["siglip"]), layer=None)
    path = tmp_path / "f.parquet"
    meta = encode_images(enc, batches(3), len(COLORS), path, dtype, {"split": "x"}, "test")
    file = pq.ParquetFile(path).metadata
    assert file.num_row_groups == 3  # one row group a batch: memory bounded by the batch
    # the features plainly encoded (a dictionary of 16-bit values never fills up: reading it is 4x slower)
    chunks = [file.row_group(g).column(c) for g in range(3) for c in range(file.num_columns)]
    assert all(not any("DICTIONARY" in e for e in chunk.encodings)
               for chunk in chunks if chunk.path_in_schema.startswith("features")) and len(chunks) > 3
    ids, feats, read_meta = read_features(path)
    assert ids.tolist() == list(range(len(COLORS)))
    assert feats.shape == (len(COLORS), 16, 32) and feats.flags.writeable  # torch owns a copy, not Arrow's buffer
    expected = enc.encode([Image.new("RGB", (48, 48), c) for c in COLORS]).numpy()
    np.testing.assert_allclose(feats, expected, rtol=tol, atol=tol)
    assert read_meta == read_metadata(path) == meta
    for key in ("encoder", "revision", "output_shape", "grid", "layer", "features"):
        assert read_meta[key] == enc.metadata()[key]
    assert read_meta["dtype"] == dtype and read_meta["split"] == "x"


def test_pooled_features_are_one_vector(tiny_models, tmp_path):
    enc = load_vision(name=str(tiny_models["clip"]), features="pooled", layer=None)
    encode_images(enc, batches(4), len(COLORS), tmp_path / "p.parquet", "float16", {}, "test")
    _, feats, meta = read_features(tmp_path / "p.parquet")
    assert feats.shape == (len(COLORS), 1, 24) and meta["grid"] is None and meta["output_shape"] == [24]


def test_failed_encode_leaves_no_file(tiny_models, tmp_path):
    enc = load_vision(name=str(tiny_models["siglip"]), layer=None)

    def broken():
        yield from batches(3)
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        encode_images(enc, broken(), len(COLORS), tmp_path / "f.parquet", "float16", {}, "test")
    assert list(tmp_path.iterdir()) == []


def test_unreadable_or_foreign_files_fail_clearly(tmp_path):
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(FrozenbridgeError, match="truncated.parquet: not a readable Parquet file"):
        read_features(bad)
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"id": [1]}), plain)
    with pytest.raises(FrozenbridgeError, match="no frozenbridge feature metadata"):
        read_metadata(plain)


def test_bfloat16_bits_are_exact(tiny_models, tmp_path):
    enc = load_vision(name=str(tiny_models["siglip"]), layer=None)
    encode_images(enc, batches(7), len(COLORS), tmp_path / "b.parquet", "bfloat16", {}, "test")
    _, feats, _ = read_features(tmp_path / "b.parquet")
    direct = enc.encode([Image.new("RGB", (48, 48), c) for c in COLORS]).to(torch.bfloat16).float().numpy()
    assert np.array_equal(feats, direct)
