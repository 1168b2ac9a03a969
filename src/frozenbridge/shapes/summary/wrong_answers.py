"""Why held-out color answers go wrong: each wrong color answer is a color of another shape in the picture or not;
if it is, was it the nearest other shape's color, and one of the two colors the asked kind came in most often in
training? Beside each count, what picking one of the picture's other shapes at random would give (the sum over wrong
answers of the share of other shapes that qualify).

A model reading the picture but tying colors to the wrong shape says colors that are in the picture; a model leaning
on habit says the colors a kind usually came in more often than chance.
"""

from __future__ import annotations

import math

from frozenbridge.shapes.data.vocab import COLORS, KINDS

TASKS = ("binding", "leftmost")  # the questions whose answer is a color
FIELDS = ("wrong", "not_a_color", "in_picture", "not_in_picture", "nearest", "nearest_chance", "common",
          "common_chance")


def trained_on_questions(recipe) -> bool:
    """A recipe whose phases include questions (the caption recipe never saw one: its answers are not analysed)."""
    return any(phase.data in ("questions", "mix") for phase in recipe.phases)


def common_colors(train_color_kind: dict[str, dict[str, int]], top: int = 2) -> dict[str, tuple[str, ...]]:
    """kind -> the `top` colors it came in most often in training (ties broken by color order)."""
    order = list(COLORS)
    return {kind: tuple(sorted(order, key=lambda c: (-train_color_kind[c][kind], order.index(c)))[:top])
            for kind in KINDS}


def asked_shape(task: str, prompt: str, shapes: list[dict]) -> dict:
    """The shape a binding or leftmost question is about (shapes are stored left to right)."""
    if task == "leftmost":
        return shapes[0]
    kind = next(k for k in KINDS if f" {k}?" in prompt)
    return next(s for s in shapes if s["kind"] == kind)


def classify(task: str, item: dict, shapes: list[dict], common: dict[str, tuple[str, ...]]) -> dict | None:
    """One right-picture prediction -> its counts (FIELDS), or None when it is right."""
    said = item["right"].strip()
    if said == item["target"].strip():
        return None
    out = dict.fromkeys(FIELDS, 0)
    out["wrong"] = 1
    if said not in COLORS:
        out["not_a_color"] = 1
        return out
    asked = asked_shape(task, item["prompt"], shapes)
    others = [s for s in shapes if s is not asked]
    if not others or said not in {s["color"] for s in others}:
        out["not_in_picture"] = 1
        return out
    out["in_picture"] = 1
    nearest = min(others, key=lambda s: math.hypot(s["cx"] - asked["cx"], s["cy"] - asked["cy"]))
    familiar = common[asked["kind"]]
    out["nearest"] = int(said == nearest["color"])
    out["nearest_chance"] = sum(s["color"] == nearest["color"] for s in others) / len(others)
    out["common"] = int(said in familiar)
    out["common_chance"] = sum(s["color"] in familiar for s in others) / len(others)
    return out


def wrong_answers(predictions: dict[str, list[dict]], scenes: list[list[dict]],
                  train_color_kind: dict[str, dict[str, int]]) -> dict:
    """recipe -> [each replicate's held-out predictions {task: [items]}] -> recipe -> task -> summed counts (chances
    rounded to 0.1), over all replicates, and `by_replicate`: each replicate's wrong answers and those whose color is
    not in the picture, in replicate order (what a paired comparison of two recipes reads)."""
    common = common_colors(train_color_kind)
    out: dict = {}
    for recipe, runs in predictions.items():
        for task in TASKS:
            total = dict.fromkeys(FIELDS, 0)
            by_replicate = []
            for run in runs:
                mine = dict.fromkeys(FIELDS, 0)
                for item in run.get(task, []):
                    counts = classify(task, item, scenes[item["picture"]], common)
                    for k, v in (counts or {}).items():
                        total[k] += v
                        mine[k] += v
                by_replicate.append({"wrong": mine["wrong"], "not_in_picture": mine["not_in_picture"]})
            total["nearest_chance"] = round(total["nearest_chance"], 1)
            total["common_chance"] = round(total["common_chance"], 1)
            out.setdefault(recipe, {})[task] = {**total, "replicates": len(runs), "by_replicate": by_replicate}
    return out
