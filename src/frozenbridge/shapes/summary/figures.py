"""The study's figures: loss curves, scores by recipe and task (seen vs held-out, min-max lines), four conditions."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from frozenbridge.shapes.data.vocab import CONDITIONS, TASKS, TESTS  # noqa: E402

TEST_COLORS = {"seen": "#3b6fb6", "heldout": "#e08a2c"}
CONDITION_COLORS = {"right": "#2f7d32", "blank": "#b0b0b0", "wrong": "#c0504d", "none": "#7a7a7a"}


def read_rows(path: Path) -> list[dict]:
    with open(path) as f:
        return [{**r, **{k: float(r[k]) for k in ("median", "min", "max")}} for r in csv.DictReader(f)]


def loss_curves(loss_csv: Path, recipes: list[str], out: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    colors = dict(zip(recipes, plt.cm.tab10.colors))
    runs: dict[tuple[str, str], list[dict]] = defaultdict(list)
    with open(loss_csv) as f:
        for r in csv.DictReader(f):
            runs[(r["recipe"], r["replicate"])].append(r)
    for (recipe, _), rows in runs.items():
        steps = [int(r["step"]) for r in rows]
        loss = np.array([float(r["loss"]) for r in rows])
        smooth = np.convolve(loss, np.ones(5) / 5, mode="valid") if len(loss) >= 5 else loss
        label = recipe if recipe not in [t.get_label() for t in ax.lines] else None
        ax.plot(steps[len(steps) - len(smooth):], smooth, color=colors.get(recipe), lw=1.2, alpha=0.85, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (5-step mean)")
    ax.set_title("loss per run (recipes from stage 1 carry its curve)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _grouped(rows: list[dict]) -> dict:
    table: dict = defaultdict(dict)
    for r in rows:
        table[(r["recipe"], r["test"], r["task"])][r["condition"]] = r
    return table


def scores_by_recipe(rows: list[dict], recipes: list[str], out: Path) -> None:
    """Right-picture exact match per task: a bar per recipe and test set, with the min-max range over replicates."""
    table = _grouped(rows)
    fig, axes = plt.subplots(1, len(TASKS), figsize=(4 * len(TASKS), 3.8), sharey=True)
    x = np.arange(len(recipes))
    for ax, task in zip(axes, TASKS):
        for j, test in enumerate(TESTS):
            cells = [table.get((r, test, task), {}).get("right") for r in recipes]
            med = np.array([c["median"] if c else np.nan for c in cells])
            lo = np.array([c["median"] - c["min"] if c else 0 for c in cells])
            hi = np.array([c["max"] - c["median"] if c else 0 for c in cells])
            ax.bar(x + (j - 0.5) * 0.38, med, 0.38, color=TEST_COLORS[test], label=test if task == TASKS[0] else None)
            ax.errorbar(x + (j - 0.5) * 0.38, med, yerr=[lo, hi], fmt="none", ecolor="black", lw=1, capsize=2)
        ax.set_title(task)
        ax.set_xticks(x, recipes, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("exact match, % (median; line = min-max)")
    axes[0].legend(title="test pairs", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def conditions(rows: list[dict], recipes: list[str], out: Path) -> None:
    """Right, blank, wrong and no picture per recipe, for every task and test set (medians over replicates)."""
    table = _grouped(rows)
    fig, axes = plt.subplots(len(TESTS), len(TASKS), figsize=(4 * len(TASKS), 3.6 * len(TESTS)), sharey=True,
                             squeeze=False)
    x = np.arange(len(recipes))
    width = 0.8 / len(CONDITIONS)
    for i, test in enumerate(TESTS):
        for ax, task in zip(axes[i], TASKS):
            for j, cond in enumerate(CONDITIONS):
                med = [table.get((r, test, task), {}).get(cond, {}).get("median", np.nan) for r in recipes]
                ax.bar(x + (j - 1.5) * width, med, width, color=CONDITION_COLORS[cond],
                       label=cond if (i, task) == (0, TASKS[0]) else None)
            ax.set_title(f"{task}, {test} pairs", fontsize=10)
            ax.set_xticks(x, recipes, rotation=35, ha="right", fontsize=8)
            ax.set_ylim(0, 105)
        axes[i][0].set_ylabel("exact match, % (median)")
    axes[0][0].legend(title="picture", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
