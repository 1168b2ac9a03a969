"""The captions the retrieval study pairs with each picture, built from the shapes study's scenes (torch-free).

Long: every shape, left to right (the shapes study's caption). Reversed: the same scene right to left (the
phrasing diagnostic: two phrasings of one scene should find each other). Short: one shape, "a red circle"; it is
right for every picture that contains that color and kind, so recall counts any picture (or phrase) that fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.core.seeds import rng
from frozenbridge.shapes.interface import COLORS, KINDS, SPLITS, Shape, caption, with_article

LENGTHS = ("long", "short")
STREAM = 0x7E77  # the test sets' short queries: a stream of shapes.data.seed of its own


def phrase(color: str, kind: str) -> str:
    return with_article(f"{color} {kind}")


PAIRS = tuple((c, k) for c in COLORS for k in KINDS)
PHRASES = tuple(phrase(c, k) for c, k in PAIRS)  # every short caption there is


@dataclass(frozen=True)
class SceneTexts:
    """One split's captions, row i = picture i."""
    long: list[str]
    reversed: list[str]
    pairs: list[frozenset[tuple[str, str]]]  # the color-kind pairs each picture contains
    short: list[str]  # the test query of each picture: one of its shapes (a held-out pair where it has one)


def _shapes(row: list[dict]) -> list[Shape]:
    return [Shape(**s) for s in row]


def scene_texts(shapes: list[list[dict]], split: str, data_seed: int,
                held_out: tuple[tuple[str, str], ...]) -> SceneTexts:
    """A split's captions from its pictures' shapes (left to right, as data/shapes stores them)."""
    draws = rng(data_seed, STREAM, SPLITS.index(split))
    long, rev, pairs, short = [], [], [], []
    held = set(held_out)
    for row in shapes:
        scene = _shapes(row)
        long.append(caption(scene))
        rev.append(caption(scene[::-1]))
        present = frozenset(s.pair for s in scene)
        pairs.append(present)
        options = sorted(present & held) or sorted(present)
        short.append(phrase(*options[int(draws.integers(len(options)))]))
    return SceneTexts(long, rev, pairs, short)


def texts_to_embed(train: SceneTexts, tests: dict[str, SceneTexts]) -> list[str]:
    """Every distinct text the study reads, sorted: training captions, every phrase, test captions both ways."""
    texts = set(train.long) | set(PHRASES)
    for t in tests.values():
        texts |= set(t.long) | set(t.reversed)
    return sorted(texts)
