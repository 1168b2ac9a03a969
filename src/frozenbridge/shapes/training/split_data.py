"""What a training or evaluation run reads: a split's captions, questions and scenes with its cached features
(read and checked by shapes.data.read), and the seeded streams of batches drawn from them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from frozenbridge.bridge.sequence import Item, Packed
from frozenbridge.core.params import VisionParams
from frozenbridge.shapes.data.read import read_features, read_split
from frozenbridge.shapes.data.vocab import caption_prompt, question_prompt


@dataclass
class SplitData:
    captions: list[str]
    questions: list[list[dict]]  # per picture: type, question, answer, about_held_out
    shapes: list[list[dict]]
    feats: torch.Tensor  # (pictures, tokens, width), row i = picture i
    meta: dict

    def caption_item(self, pic: int) -> Item:
        return Item(pic, caption_prompt(), self.captions[pic])

    @classmethod
    def from_table(cls, table, feats: torch.Tensor, meta: dict) -> "SplitData":
        """From a pictures table (its caption, questions and shapes columns) and its features, row for row."""
        return cls(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                   table.column("shapes").to_pylist(), feats, meta)


def load_split(split: str, pictures_dir: Path, features_dir: Path, vision: VisionParams) -> SplitData:
    table, feats, meta = read_split(split, pictures_dir, features_dir, vision, ["caption", "questions", "shapes"])
    return SplitData.from_table(table, feats, meta)


def load_blank(features_dir: Path, vision: VisionParams) -> torch.Tensor:
    """The blank picture of the controls, through the same encoder."""
    return read_features("blank", features_dir, vision)[1]


def index_stream(n: int, seed: np.random.SeedSequence) -> Iterator[int]:
    """An endless stream of 0..n-1, a fresh permutation each epoch, fully determined by the seed."""
    rng = np.random.default_rng(seed)
    while True:
        yield from rng.permutation(n).tolist()


def caption_batches(data: SplitData, seed: np.random.SeedSequence, size: int) -> Iterator[list[Item]]:
    stream = index_stream(len(data.captions), seed)
    while True:
        yield [data.caption_item(next(stream)) for _ in range(size)]


def pictures_per_batch(data: SplitData, size: int) -> int:
    """Whole pictures a question batch holds: as many as give `size` questions on average (1,500 pictures with
    4,882 questions and size 16: 5 pictures, 16.3 questions a batch)."""
    questions = sum(len(qs) for qs in data.questions)
    return max(1, round(size * len(data.questions) / max(1, questions)))


def question_batches(data: SplitData, seed: np.random.SeedSequence, size: int) -> Iterator[list[Packed]]:
    """Endless batches of whole pictures, each a packed row of the picture and all its questions (the model runs
    the picture's tokens once for them, or unpacks them where it cannot); the pictures follow the seed's stream,
    so every recipe of a replicate sees the same pictures in the same order."""
    per = pictures_per_batch(data, size)
    stream = (pic for pic in index_stream(len(data.questions), seed) if data.questions[pic])
    while True:
        pics = [next(stream) for _ in range(per)]
        yield [Packed(pic, tuple((question_prompt(q["question"]), q["answer"]) for q in data.questions[pic]))
               for pic in pics]
