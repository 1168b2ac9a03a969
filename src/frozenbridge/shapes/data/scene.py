"""Scenes of colored shapes, and the exact text the model is taught to say about them.

A scene is a list of shapes sorted left to right. Captions name every shape in that order; questions are
asked only where they have exactly one right answer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from frozenbridge.shapes.data.vocab import COLORS, KINDS, NUMBER_WORDS  # noqa: F401 (the scene's words)

COUNT_QUESTION = "How many shapes are there?"
LEFTMOST_QUESTION = "What color is the leftmost shape?"


def binding_question(kind: str) -> str:
    return f"What color is the {kind}?"


@dataclass(frozen=True)
class Shape:
    color: str
    kind: str
    cx: float  # center, pixels
    cy: float
    size: float  # side of the bounding square, pixels

    @property
    def pair(self) -> tuple[str, str]:
        return (self.color, self.kind)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Question:
    type: str  # count | binding | leftmost
    question: str
    answer: str
    about_held_out: bool  # the answer depends on a held-out color-kind pair

    def to_dict(self) -> dict:
        return asdict(self)


def with_article(words: str) -> str:
    return ("an " if words[0] in "aeiou" else "a ") + words


def caption(shapes: list[Shape]) -> str:
    """'an orange circle, a yellow circle and a purple triangle' (shapes already left to right)."""
    names = [with_article(f"{s.color} {s.kind}") for s in shapes]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def questions(shapes: list[Shape], held_out: frozenset[tuple[str, str]] = frozenset()) -> list[Question]:
    """Every question with one right answer: count; binding for each kind present exactly once; leftmost."""
    out = [Question("count", COUNT_QUESTION, NUMBER_WORDS[len(shapes)], any(s.pair in held_out for s in shapes))]
    for kind in KINDS:
        of_kind = [s for s in shapes if s.kind == kind]
        if len(of_kind) == 1:
            only = of_kind[0]
            out.append(Question("binding", binding_question(kind), only.color, only.pair in held_out))
    leftmost = shapes[0]
    out.append(Question("leftmost", LEFTMOST_QUESTION, leftmost.color, leftmost.pair in held_out))
    return out
