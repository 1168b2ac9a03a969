"""Paired seeds: two recipes compared replicate by replicate, with how sure the comparison is.

Within a replicate every recipe starts from the same random connector and sees the same questions in the same order,
so the per-replicate difference is the fair comparison; a difference between two medians can be luck (three seeds
of the reference flipped under five). For each pair, test set and task: in how many replicates the first recipe is
ahead, tied and behind, and the median paired difference, in questions right (first minus second); the
question tasks only (captions are not what the recipes of a pair differ in).

The statistics (the sign test, the exact interval for the median difference, what it supports) are core.paired's,
the rule every paired comparison of the project uses.
"""

from __future__ import annotations

from frozenbridge.core.paired import (CLAIM, LEVEL, METHOD, median_interval, sign_test_p,  # noqa: F401 (its statistics)
                                      statistics_of, supported)
from frozenbridge.shapes.data.vocab import QUESTION_TASKS, TESTS

PAIRS = (("qa", "caption_qa"), ("caption_qa", "caption_qa_mix"), ("caption_qa", "caption_qa_lora"))


def questions_right(score: dict) -> int:
    """Items right under the right picture, from a task's score (right is a percentage of n, rounded to 0.01)."""
    return round(score["right"] * score["n"] / 100)


def compare(first: list[dict], second: list[dict]) -> dict:
    """Per-replicate task scores of two recipes (same replicates, same order) -> ahead / tied / behind counts, the
    median of first - second in questions, the sign test, the interval for that median and what it supports."""
    diffs = [questions_right(a) - questions_right(b) for a, b in zip(first, second, strict=True)]
    return {**statistics_of(diffs), "items": first[0]["n"]}


def paired(scores: dict[str, list[dict]]) -> dict:
    """recipe -> per-replicate scores.json (replicate order) -> {"a vs b": {test: {task: compare(...)}}} for every
    pair of PAIRS whose two recipes both ran."""
    out: dict = {}
    for a, b in PAIRS:
        if a not in scores or b not in scores:
            continue
        for test in TESTS:
            for task in QUESTION_TASKS:
                ra = [r["tests"][test][task] for r in scores[a] if task in r["tests"][test]]
                rb = [r["tests"][test][task] for r in scores[b] if task in r["tests"][test]]
                if ra and len(ra) == len(rb):
                    out.setdefault(f"{a} vs {b}", {}).setdefault(test, {})[task] = compare(ra, rb)
    return out
