"""Per-run scores into aggregates over replicates (median, min, max), and tidy rows for plots."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from frozenbridge.core.summary import spread
from frozenbridge.shapes.data.vocab import CONDITIONS, TASKS, TESTS
from frozenbridge.shapes.paths import STAGE1, model_dir, run_dir

STATS = ("right", "gap")
CONTROL_STATS = ("blank", "wrong", "none", "wrong_vs_shown")


def summary(values: list[float]) -> dict:
    return spread(values, 2)


def load_scores(runs: Path, recipes: tuple[str, ...], replicates: tuple[int, ...]) -> dict[str, list[dict]]:
    """recipe -> [scores of each replicate, with the run's final training loss], in replicate order."""
    out: dict[str, list[dict]] = {}
    for recipe in recipes:
        for rep in replicates:
            scores = json.loads((run_dir(runs, recipe, rep) / "scores.json").read_text())
            scores["final_loss"] = json.loads((model_dir(runs, recipe, rep) / "run.json").read_text())["final_loss"]
            out.setdefault(recipe, []).append(scores)
    return out


def loss_rows(runs: Path, recipes: tuple[str, ...], replicates: tuple[int, ...]) -> list[list]:
    """Every run's loss per step: [recipe, replicate, step, phase, loss] rows (for plots/loss.csv)."""
    rows = []
    for recipe in recipes:
        for rep in replicates:
            with open(model_dir(runs, recipe, rep) / "history.csv", newline="") as h:
                rows += [[recipe, rep, r["step"], r["phase"], r["loss"]] for r in csv.DictReader(h)]
    return rows


def stage1_curves(runs: Path, replicates: tuple[int, ...]) -> dict:
    """Each replicate's stage 1 as its stop rule read it: replicate -> {"curve": [[step, percent of the rule's
    training captions exact, loss at that step], ...], "steps" it trained, and what its design did inside}. The
    connector comparison judges designs on these curves (steps to the rule's share, the share at equal steps)."""
    out = {}
    for rep in replicates:
        folder = model_dir(runs, STAGE1, rep)
        info = json.loads((folder / "run.json").read_text())
        with open(folder / "history.csv", newline="") as h:
            loss = {int(r["step"]): round(float(r["loss"]), 4) for r in csv.DictReader(h)}
        out[str(rep)] = {"curve": [[step, exact, loss.get(step)] for step, exact in info.get("stage1_checks", [])],
                         "steps": info["steps"], **({"inside": info["inside"]} if info.get("inside") else {})}
    return out


def aggregate(scores: dict[str, list[dict]]) -> tuple[dict, dict]:
    """(main metrics: right and gap per recipe/test/task, controls: the other conditions), median/min/max each."""
    main: dict = {}
    controls: dict = {}
    for recipe, runs in scores.items():
        for test in TESTS:
            for task in TASKS:
                per_run = [r["tests"][test][task] for r in runs if task in r["tests"][test]]
                if not per_run:
                    continue
                main.setdefault(recipe, {}).setdefault(test, {})[task] = {
                    s: summary([p[s] for p in per_run]) for s in STATS}
                controls.setdefault(recipe, {}).setdefault(test, {})[task] = {
                    s: summary([p[s] for p in per_run]) for s in CONTROL_STATS}
            main[recipe].setdefault(test, {})["distinct_captions"] = summary(
                [r["tests"][test]["caption"]["distinct"] for r in runs])
        main[recipe]["final_loss"] = {k: round(v, 4) for k, v in summary([r["final_loss"] for r in runs]).items()}
    return main, controls


def per_replicate(scores: dict[str, list[dict]]) -> dict:
    """Every run's right-picture score, gap and items: recipe -> test -> task -> replicate -> {right, gap, n}, so
    recipes (and an audit of the study's own pictures) can be compared replicate by replicate (replicates are
    paired: same initial connector, same questions)."""
    out: dict = {}
    for recipe, runs in scores.items():
        for test in TESTS:
            for task in TASKS:
                for r in runs:
                    if task in r["tests"][test]:
                        s = r["tests"][test][task]
                        out.setdefault(recipe, {}).setdefault(test, {}).setdefault(task, {})[str(r["replicate"])] = {
                            "right": s["right"], "gap": s["gap"], "n": s["n"]}
    return out


def score_rows(scores: dict[str, list[dict]]) -> list[dict]:
    """One row per recipe, test, task and condition: the median and range over replicates (for CSV plots)."""
    rows = []
    for recipe, runs in scores.items():
        for test in TESTS:
            for task in TASKS:
                for cond in (*CONDITIONS, "gap"):
                    vals = [r["tests"][test][task][cond] for r in runs if task in r["tests"][test]]
                    if vals:
                        rows.append({"recipe": recipe, "test": test, "task": task, "condition": cond,
                                     "label": f"{recipe} {test} {task}", **summary(vals)})
    return rows
