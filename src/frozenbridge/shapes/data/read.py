"""Reading the pictures back: a split's rows from data/shapes/pictures and its cached features from
data/shapes/features, checked against params (encoder, feature kind, layer) and against each other (the same
pictures in the same order), so a stale cache is never silently used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import check_features, load_feature_tensor
from frozenbridge.core.params import VisionParams
from frozenbridge.core.stage import require

DATA_STAGE, ENCODE_STAGE = "shapes_data", "shapes_encode"  # the stages that write the pictures and their features


def read_pictures(split: str, pictures_dir: Path, columns: list[str]) -> pa.Table:
    """The split's rows (the columns asked for), one a picture, in id order."""
    path = Path(pictures_dir) / f"{split}.parquet"
    require(path, stage=DATA_STAGE)
    return pq.read_table(path, columns=columns)


def read_features(split: str, features_dir: Path, vision: VisionParams) -> tuple[np.ndarray, torch.Tensor, dict]:
    """(picture ids, features in their stored dtype (pictures, tokens, width), the cache's metadata)."""
    path = Path(features_dir) / f"{split}.parquet"
    require(path, stage=ENCODE_STAGE)
    ids, feats, meta = load_feature_tensor(path, ENCODE_STAGE)
    check_features(meta, path, vision.name, vision.features, vision.layer, ENCODE_STAGE)
    return ids, feats, meta


def read_split(split: str, pictures_dir: Path, features_dir: Path, vision: VisionParams,
               columns: list[str]) -> tuple[pa.Table, torch.Tensor, dict]:
    """(the split's rows, its features row for row, their metadata), refusing features of other pictures."""
    require(Path(pictures_dir) / f"{split}.parquet", Path(features_dir) / f"{split}.parquet", stage=ENCODE_STAGE)
    table = read_pictures(split, pictures_dir, ["id", *columns])
    ids, feats, meta = read_features(split, features_dir, vision)
    if not np.array_equal(ids, table.column("id").to_numpy()):
        raise FrozenbridgeError(f"{Path(features_dir) / split}.parquet: picture ids differ from "
                                f"{Path(pictures_dir) / split}.parquet; rerun `dvc repro {ENCODE_STAGE}`")
    return table, feats, meta
