"""Figures of the analyses: paired differences replicate by replicate, and where wrong colors come from."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from frozenbridge.shapes.data.vocab import QUESTION_TASKS, TESTS  # noqa: E402


def paired_figure(pairs: dict, out: Path) -> None:
    """One panel per recipe pair: each replicate's difference in questions right (first - second) per task and
    test set, the median as a bar; above zero the first recipe is ahead."""
    names = list(pairs) or ["(no pair of recipes ran)"]
    fig, axes = plt.subplots(1, len(names), figsize=(max(7.0, 5.2 * len(names)), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        labels = []
        for test in TESTS:
            for task in QUESTION_TASKS:
                cell = pairs.get(name, {}).get(test, {}).get(task)
                if cell is None:
                    continue
                x = len(labels)
                labels.append(f"{task}\n{test}")
                ax.bar(x, cell["median_difference"], color="#9ecae1" if test == "seen" else "#fdae6b", width=0.7)
                ax.scatter([x] * len(cell["differences"]), cell["differences"], color="black", s=14, zorder=3)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_title(name, fontsize=10)
        ax.set_ylabel("questions right, first − second")
    fig.suptitle("Paired replicates: bars = median difference (blue seen, orange held-out pairs),\n"
                 "dots = each replicate; above 0 the first recipe of the pair is ahead", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)


def wrong_answers_figure(wrong: dict, out: Path) -> None:
    """Left: where held-out wrong colors come from (another shape in the picture, a color not in it). Right: of
    those in the picture, how many were the nearest shape's color or a common color for the kind, beside chance."""
    rows = [(recipe, task, c) for recipe, tasks in wrong.items() for task, c in tasks.items()]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.5 * len(rows) + 2.2))
    labels = [f"{r} {t}" for r, t, _ in rows]
    y = range(len(rows))
    inside = [c["in_picture"] for _, _, c in rows]
    outside = [c["not_in_picture"] for _, _, c in rows]
    other = [c["not_a_color"] for _, _, c in rows]
    left.barh(y, inside, color="#3182bd", label="color of another shape in the picture")
    left.barh(y, outside, left=inside, color="#e6550d", label="color not in the picture")
    left.barh(y, other, left=[a + b for a, b in zip(inside, outside)], color="#bdbdbd", label="not a color")
    left.set_yticks(list(y), labels, fontsize=8)
    left.set_xlabel("wrong held-out answers, all replicates")
    left.legend(fontsize=7, loc="lower right")
    h = 0.2
    for i, (key, color) in enumerate((("nearest", "#31a354"), ("common", "#756bb1"))):
        right.barh([v + (2 * i - 1.5) * h for v in y], [c[key] for _, _, c in rows], height=h, color=color,
                   label=f"{key} (observed)")
        right.barh([v + (2 * i - 0.5) * h for v in y], [c[f"{key}_chance"] for _, _, c in rows], height=h,
                   color=color, alpha=0.35, label=f"{key} (chance)")
    right.set_yticks(list(y), labels, fontsize=8)
    right.set_xlabel("of the wrong colors in the picture")
    right.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)


def probes_figure(result: dict, out: Path) -> None:
    """Probe accuracy by place (encoder, connectors), color and kind, seen vs held-out pairs; lines = replicate
    range."""
    places = list(result["places"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    width = 0.38
    for ax, target in zip(axes, ("color", "kind")):
        for j, (test, color) in enumerate((("seen", "#9ecae1"), ("heldout", "#fdae6b"))):
            cells = [result["places"][p][target][test] for p in places]
            xs = [i + (j - 0.5) * width for i in range(len(places))]
            ax.bar(xs, [c["median"] for c in cells], width=width, color=color, label=f"{test} pairs")
            ax.vlines(xs, [c["min"] for c in cells], [c["max"] for c in cells], color="black", lw=1)
        ax.set_xticks(range(len(places)), places, fontsize=8)
        ax.set_title(f"linear probe: a shape's {target}", fontsize=10)
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("accuracy, %")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
