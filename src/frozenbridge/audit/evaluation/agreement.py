"""An audit of the shapes study's own pictures (data.export) set beside the study: the audit trains what the study's
caption_qa recipe trains, from the same seed streams replicate by replicate, and asks through the same conditions
(core.controls), so its right-picture score and gap per kind and test set should agree with the study's. Range
against range, and the paired rule the verdict table uses (core.paired): per replicate the audit's number minus the
study's, the exact interval for the median difference. Read from the study's metrics (scores.json,
replicates.json), never typed."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from frozenbridge.core.paired import statistics_of

EXPORTED = "exported.json"  # at an exported folder's root: where it came from
STUDY_RECIPE = "caption_qa"  # what the audit trains: stage 1 on captions, then questions
# what the page cites of the study: qa (questions alone) against caption_qa, by test set and task
STUDY_RECIPES, STUDY_TESTS, STUDY_TASKS = ("qa", "caption_qa"), ("seen", "heldout"), ("count", "binding", "leftmost")
WHAT = {"right": "right picture", "gap": "gap"}
STAGE1 = "stage1.json"  # beside replicates.json: where the study's stop rule ended each replicate's stage 1


def read_all_of(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def read(path: Path) -> dict | None:
    """The study's caption_qa entry of a metrics file, None where the file or the entry is missing."""
    return (read_all_of(path) or {}).get(STUDY_RECIPE)


def audit_values(checks: dict, test: str, kind: str, what: str) -> dict[str, float]:
    """{replicate: the audit's right-picture score or gap} for one test set and kind."""
    out = {}
    for rep, sides in (checks.get("by_replicate") or {}).items():
        cell = (sides.get(test) or {}).get(kind)
        if cell is not None:
            out[rep] = cell["score"]["right"] if what == "right" else cell["gap"]
    return out


def spread(values) -> dict:
    values = list(values)
    return {"median": round(statistics.median(values), 2), "min": min(values), "max": max(values)}


def agreement(checks: dict, replicates_path: Path) -> dict | None:
    """Per kind, test set and number (right picture, gap): the audit's replicates and the study's caption_qa
    replicates (metrics/shapes/replicates.json) each as median and range, and the paired differences (audit minus
    study) of the replicates both hold; None where the study's metrics are not there."""
    study = read(replicates_path)
    if study is None:
        return None
    rows = []
    for test in STUDY_TESTS:
        for kind in STUDY_TASKS:
            for what in WHAT:
                mine = audit_values(checks, test, kind, what)
                theirs = {rep: v[what] for rep, v in (study.get(test, {}).get(kind) or {}).items()}
                if not mine or not theirs:
                    continue
                both = sorted(set(mine) & set(theirs), key=int)
                diffs = [round(mine[r] - theirs[r], 2) for r in both]
                paired = statistics_of(diffs) if diffs else None
                items = {v.get("n") for v in (study.get(test, {}).get(kind) or {}).values()} - {None}
                asked = {c.get("questions") for sides in (checks.get("by_replicate") or {}).values()
                         if (c := (sides.get(test) or {}).get(kind))} - {None}
                rows.append({"test": test, "kind": kind, "what": what, "audit": mine, "study": theirs,
                             "audit_items": max(asked) if asked else None,
                             "study_items": max(items) if items else None,
                             "audit_spread": spread(mine.values()), "study_spread": spread(theirs.values()),
                             "within": min(theirs.values()) <= statistics.median(mine.values()) <= max(theirs.values()),
                             "paired": paired})
    if not rows:
        return None
    stage1 = read_all_of(Path(replicates_path).with_name(STAGE1))
    return {"recipe": STUDY_RECIPE, "rows": rows, "within": sum(r["within"] for r in rows),
            "differ": sum(r["paired"] is not None and r["paired"]["supported"] is not None for r in rows),
            "study_stage1_steps": {rep: v["steps"] for rep, v in (stage1 or {}).items() if "steps" in v}}


def study_reference(scores_path: Path) -> dict | None:
    """The shapes study's right-picture medians over replicates, {"qa": {"seen": {task: median}, "heldout": {...}},
    "caption_qa": {...}}, from its metrics/shapes/scores.json (scores[recipe][test][task]["right"]["median"]); None
    when the file is missing or lacks either recipe."""
    path = Path(scores_path)
    if not path.is_file():
        return None
    scores = json.loads(path.read_text())
    out: dict = {}
    for recipe in STUDY_RECIPES:
        tests = scores.get(recipe)
        if not isinstance(tests, dict) or not all(isinstance(tests.get(t), dict) for t in STUDY_TESTS):
            return None
        out[recipe] = {test: {task: tests[test][task]["right"]["median"] for task in STUDY_TASKS
                              if isinstance(tests[test].get(task), dict) and "right" in tests[test][task]}
                       for test in STUDY_TESTS}
    return out
