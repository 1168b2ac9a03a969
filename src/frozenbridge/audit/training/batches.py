"""The seeded streams of training batches drawn from the folder: captions, and whole pictures with all their
questions packed after them (bridge.sequence.Packed: the picture's tokens run once for its questions)."""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from frozenbridge.audit.data.folder import AuditSplit
from frozenbridge.bridge.sequence import Item, Packed


def index_stream(rows: list[int], seed: np.random.SeedSequence) -> Iterator[int]:
    """An endless stream of `rows`, a fresh permutation each epoch, fully determined by the seed."""
    rng = np.random.default_rng(seed)
    while True:
        yield from (rows[i] for i in rng.permutation(len(rows)).tolist())


def caption_batches(split: AuditSplit, prompt: str, size: int, seed: np.random.SeedSequence) -> Iterator[list[Item]]:
    """Endless batches of `size` captioned pictures (the pictures without a caption are never drawn)."""
    rows = [i for i, p in enumerate(split.pictures) if p.caption is not None]
    stream = index_stream(rows, seed)
    while True:
        yield [Item(pic, prompt, split.pictures[pic].caption) for pic in (next(stream) for _ in range(size))]


def pictures_per_batch(split: AuditSplit, size: int) -> int:
    """Whole pictures a question batch holds: as many as give `size` questions on average."""
    asked = [len(p.questions) for p in split.pictures if p.questions]
    return max(1, round(size * len(asked) / max(1, sum(asked))))


def question_batches(split: AuditSplit, ask: Callable[[str], str], size: int,
                     seed: np.random.SeedSequence) -> Iterator[list[Packed]]:
    """Endless batches of whole pictures, each a packed row of the picture and all its questions (`ask` turns a
    question into its prompt)."""
    rows = [i for i, p in enumerate(split.pictures) if p.questions]
    per = pictures_per_batch(split, size)
    stream = index_stream(rows, seed)
    while True:
        pics = [next(stream) for _ in range(per)]
        yield [Packed(pic, tuple((ask(q.question), q.answer) for q in split.pictures[pic].questions))
               for pic in pics]
