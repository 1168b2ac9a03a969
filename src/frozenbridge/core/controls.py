"""The four conditions a test item is asked under, and the number that matters: one implementation for the shapes
study's evaluation and the audit of a folder, so the two measure the same thing the same way.

Every item is asked with its own picture (right), a blank white picture (blank), the picture of another item of its
group (wrong) and no picture at all, the prompt alone (none). gap = right - max(blank, wrong, none), the best control
being the first of the highest in that order. A group is what items are compared within: the shapes study's task
on one test set, an audit's kind on the seen or the held-out side. The wrong picture is the picture of the item half
the group's list away (the next one along with another picture where that is the item's own), as the reference's
"another test scene's picture": drawn from the same test set, so it is a picture of the same kind of scene, and a
right answer with it is one the two scenes happen to share.

Scoring: `is_right` compares trimmed and lower-cased (a folder's answers may be capitalized: the audit's rule); the
shapes study compares its own lower-case texts trimmed only (shapes.evaluation.exact), a difference docs/audit.md's
measurement against the study puts a number on. Pure numbers, no torch: the reports and summaries
import it alone; bridge/ask.py asks a trained run the items.
"""

from __future__ import annotations

from dataclasses import dataclass

CONDITIONS = ("right", "blank", "wrong", "none")  # which picture the prompt is shown with
CONTROLS = CONDITIONS[1:]


@dataclass(frozen=True)
class Asked:
    """One test item: its picture (a row of the features), prompt and true answer, and the row shown as the wrong
    picture."""
    picture: int
    prompt: str
    target: str
    wrong: int


def normalize(text: str) -> str:
    """An answer as it is scored: trimmed and lower-cased, so "Red " and "red" match."""
    return text.strip().lower()


def is_right(said: str, target: str) -> bool:
    return normalize(said) == normalize(target)


def percent(hits: int, n: int) -> float:
    return round(100.0 * hits / n, 2) if n else 0.0


def best_control(scores: dict[str, float]) -> str:
    """The control with the highest score, the first of a tie in CONTROLS order."""
    return max(CONTROLS, key=lambda c: scores[c])


def gap(scores: dict[str, float]) -> float:
    """The right picture's score over the best control's, in points."""
    return round(scores["right"] - scores[best_control(scores)], 2)


def wrong_pictures(pictures: list[int]) -> list[int]:
    """For each item of a group (its picture), the picture of the item half the list away, or the next one along
    with another picture where that is its own (its own only when every item shares one picture)."""
    m = len(pictures)
    out = []
    for i, pic in enumerate(pictures):
        others = (pictures[(i + m // 2 + j) % m] for j in range(m))
        out.append(next((p for p in others if p != pic), pic))
    return out


def asked_in_groups(groups: dict[object, list[tuple[int, str, str]]]) -> dict[object, list[Asked]]:
    """Each group's (picture, prompt, target) items with their wrong pictures, drawn within the group."""
    out = {}
    for key, rows in groups.items():
        wrong = wrong_pictures([pic for pic, _, _ in rows])
        out[key] = [Asked(pic, prompt, target, w) for (pic, prompt, target), w in zip(rows, wrong, strict=True)]
    return out


def shown(item: Asked, condition: str, blank_row: int) -> int | None:
    """The feature row the prompt is shown with under `condition` (None: no picture)."""
    return {"right": item.picture, "blank": blank_row, "wrong": item.wrong, "none": None}[condition]
