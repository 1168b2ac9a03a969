"""Whether a verdict that holds on right-picture scores stands on a picture the model reads.

A paired claim compares right-picture exact match (questions right with the picture shown). A recipe can be ahead on
those scores while its own right-picture score is no better than what it answers with no picture, a blank one or
another scene's: its gap over its best control (metrics/shapes/replicates.json's `gap`, right minus the best of the
three controls) is not above zero in every replicate. Then the verdict holds on raw scores only, and its row says so
with the cell's numbers: which side of the pair, its right score and its gap (median [lowest, highest] over the
replicates), beside its best control by median (controls.json, or right minus gap where a folder keeps none).

Which side a rule stands on: the one it expects ahead (`Ahead`, `AtTheView`), or both for "no difference"."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from frozenbridge.core.controls import CONTROLS, best_control
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.tools.verdicts.rules import HOLDS, NoDifference

CONTROL_WORDS = {"blank": "a blank picture", "wrong": "another scene's picture", "none": "no picture"}
TEST_WORDS = {"heldout": "held-out", "seen": "seen"}


@dataclass(frozen=True)
class Ground:
    """One side of a paired cell: its right-picture scores and its gaps over the best control, replicate by
    replicate, and its best control by median ("a blank picture's 31.67%" from controls.json, or where the folder
    keeps none, right minus gap: "23.33% by median")."""
    side: str  # "first" or "second" of the pair
    label: str  # "caption_qa's held-out binding"
    right: tuple[float, ...]
    gap: tuple[float, ...]
    control: str = ""

    @property
    def above_zero(self) -> bool:
        """Whether the gap is above zero in every replicate."""
        return min(self.gap) > 0

    def said(self) -> str:
        control = f" ({self.control})" if self.control else ""
        return (f"{self.label} is {statistics.median(self.right):.4g}% right but "
                f"{statistics.median(self.gap):.4g} [{min(self.gap):+.4g}, {max(self.gap):+.4g}] points over its "
                f"best control{control}, not above zero in every replicate")


def _best_control(metrics: Path, recipe: str, test: str, task: str) -> str:
    cell = ((read_json_if_present(metrics / "controls.json") or {}).get(recipe, {}).get(test, {}).get(task) or {})
    medians = {name: cell[name]["median"] for name in CONTROLS if name in cell}
    if set(medians) != set(CONTROLS):
        return ""
    best = best_control(medians)  # the shared rule: the highest, the first of a tie
    return f"{CONTROL_WORDS[best]}'s {medians[best]:.4g}%"


def ground(side: str, who: str, metrics: Path, recipe: str, test: str, task: str) -> Ground | None:
    """`who`'s cell (a recipe, or a compared setting answering with `recipe`) from the metrics/shapes folder
    `metrics`; None where replicates.json does not hold it."""
    per = ((read_json_if_present(metrics / "replicates.json") or {}).get(recipe, {}).get(test, {}).get(task) or {})
    runs = [per[r] for r in sorted(per, key=int) if "gap" in per[r]]
    if not runs:
        return None
    right, gap = tuple(r["right"] for r in runs), tuple(r["gap"] for r in runs)
    control = _best_control(metrics, recipe, test, task) or \
        f"{statistics.median(round(a - b, 2) for a, b in zip(right, gap)):.4g}% by median"
    return Ground(side, f"{who}'s {TEST_WORDS.get(test, test)} {task}", right, gap, control)


def standing(rule) -> set[str]:
    """The sides of a pair the rule's "holds" stands on."""
    if isinstance(rule, NoDifference):
        return {"first", "second"}
    expect = getattr(rule, "expect", None)
    return {expect} if expect else set()


def raw_scores_note(rule, verdict: str, grounds: tuple[Ground, ...]) -> str:
    """"on raw scores only: ..." where the verdict holds and a cell it stands on has a gap not above zero in every
    replicate; empty otherwise."""
    if verdict != HOLDS:
        return ""
    weak = [g for g in grounds if g.side in standing(rule) and not g.above_zero]
    return "on raw scores only: " + "; ".join(g.said() for g in weak) if weak else ""
