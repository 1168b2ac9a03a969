"""An audit of the shapes study's own pictures (data.export) set beside the study's table: the audit trains what the
study's caption_qa recipe trains, so its right-picture score and gap per kind and test set should fall within the
range of the study's replicates. Read from the study's metrics/shapes/scores.json, never typed."""

from __future__ import annotations

import json
from pathlib import Path

EXPORTED = "exported.json"  # at an exported folder's root: where it came from
STUDY_RECIPE = "caption_qa"  # what the audit trains: stage 1 on captions, then questions
# what the page cites of the study: qa (questions alone) against caption_qa, by test set and task
STUDY_RECIPES, STUDY_TESTS, STUDY_TASKS = ("qa", "caption_qa"), ("seen", "heldout"), ("count", "binding", "leftmost")


def agreement(checks: dict, scores_path: Path) -> dict | None:
    """The audit's right-picture score and gap per kind and test set beside the study's caption_qa range over its
    replicates (metrics/shapes/scores.json), or None where the study's scores are not there."""
    try:
        study = json.loads(Path(scores_path).read_text())[STUDY_RECIPE]
    except (OSError, ValueError, KeyError):
        return None
    split = checks.get("seen_heldout") or {}
    rows = []
    for test in ("seen", "heldout"):
        kinds = (split.get(test) or {}).get("kinds", {})
        for kind, block in kinds.items():
            for what, audit_value in (("right", block["score"]["right"]), ("gap", block["gap"])):
                ranged = study.get(test, {}).get(kind, {}).get(what)
                if ranged is None:
                    continue
                rows.append({"what": f"{kind}, {test}, {'right picture' if what == 'right' else 'gap'}",
                             "audit": audit_value, "study_min": ranged["min"], "study_median": ranged["median"],
                             "study_max": ranged["max"], "within": ranged["min"] <= audit_value <= ranged["max"]})
    return {"recipe": STUDY_RECIPE, "rows": rows, "within": sum(r["within"] for r in rows)} if rows else None


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
