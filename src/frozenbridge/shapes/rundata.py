"""What a training or evaluation run reads: a split's captions and questions, with its cached features.

Features are checked against params (encoder, feature kind, layer) so a stale cache is never silently used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow.parquet as pq
import torch

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import check_features, load_feature_tensor
from frozenbridge.core.stage import require
from frozenbridge.shapes.params import VisionParams
from frozenbridge.bridge.sequence import Item
from frozenbridge.shapes.vocab import caption_prompt, question_prompt


@dataclass
class SplitData:
    captions: list[str]
    questions: list[list[dict]]  # per picture: type, question, answer, about_held_out
    shapes: list[list[dict]]
    feats: torch.Tensor  # (pictures, tokens, width), row i = picture i
    meta: dict

    def caption_item(self, pic: int) -> Item:
        return Item(pic, caption_prompt(), self.captions[pic])

    def question_items(self) -> list[tuple[int, dict]]:
        return [(pic, q) for pic, qs in enumerate(self.questions) for q in qs]


def load_split(split: str, shapes_dir: Path, features_dir: Path, vision: VisionParams) -> SplitData:
    shapes_path, feats_path = Path(shapes_dir) / f"{split}.parquet", Path(features_dir) / f"{split}.parquet"
    require(shapes_path, feats_path, stage="encode")
    table = pq.read_table(shapes_path, columns=["id", "caption", "questions", "shapes"])
    ids, feats, meta = load_feature_tensor(feats_path)
    check_features(meta, feats_path, vision.name, vision.features, vision.layer)
    if not np.array_equal(ids, table.column("id").to_numpy()):
        raise FrozenbridgeError(f"{feats_path}: picture ids differ from {shapes_path}; rerun `dvc repro encode`")
    return SplitData(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                     table.column("shapes").to_pylist(), feats, meta)


def load_blank(features_dir: Path, vision: VisionParams) -> torch.Tensor:
    path = Path(features_dir) / "blank.parquet"
    require(path, stage="encode")
    _, feats, meta = load_feature_tensor(path)
    check_features(meta, path, vision.name, vision.features, vision.layer)
    return feats


def index_stream(n: int, seed: np.random.SeedSequence) -> Iterator[int]:
    """An endless stream of 0..n-1, a fresh permutation each epoch, fully determined by the seed."""
    rng = np.random.default_rng(seed)
    while True:
        yield from rng.permutation(n).tolist()


def caption_batches(data: SplitData, seed: np.random.SeedSequence, size: int) -> Iterator[list[Item]]:
    stream = index_stream(len(data.captions), seed)
    while True:
        yield [data.caption_item(next(stream)) for _ in range(size)]


def question_batches(data: SplitData, seed: np.random.SeedSequence, size: int) -> Iterator[list[Item]]:
    pool = data.question_items()
    stream = index_stream(len(pool), seed)
    while True:
        picked = [pool[next(stream)] for _ in range(size)]
        yield [Item(pic, question_prompt(q["question"]), q["answer"]) for pic, q in picked]
