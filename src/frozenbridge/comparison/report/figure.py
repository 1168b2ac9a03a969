"""The connector comparison's figure, one a view: exact match per design, task and pair set (the equal-settings view's
in results/connectors/equal-settings/, the own-best view's in results/connectors/)."""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from frozenbridge.comparison.report.tables import EQUAL_SETTINGS, TASKS, TESTS, designs, per_replicate  # noqa: E402


def draw(root: Path, out: Path, view: str = EQUAL_SETTINGS) -> bool:
    """A panel per pair set; per task a bar per design of the view (median over replicates, line: lowest-highest) and
    a dash at the median best control. False, and nothing drawn, before any design is compared with the MLP."""
    found = designs(root, view)
    if set(found) <= {"mlp"}:
        return False
    names = list(found)
    colors = dict(zip(names, plt.cm.tab10.colors))
    width = 0.8 / len(names)
    fig, axes = plt.subplots(1, len(TESTS), figsize=(6.5 * len(TESTS), 4), sharey=True)
    x = np.arange(len(TASKS))
    for ax, (test, label) in zip(axes, TESTS):
        for j, name in enumerate(names):
            for i, (task, recipe) in enumerate(TASKS):
                if not (per := per_replicate(found[name][1], recipe, test, task)):
                    continue
                right = [r["right"] for r in per.values()]
                control = statistics.median(r["right"] - r["gap"] for r in per.values())
                at, med = x[i] + (j - (len(names) - 1) / 2) * width, statistics.median(right)
                ax.bar(at, med, width, color=colors[name], label=name if i == 0 else None)
                ax.errorbar(at, med, yerr=[[med - min(right)], [max(right) - med]], fmt="none", ecolor="black", lw=1,
                            capsize=2)
                ax.plot([at - width / 2, at + width / 2], [control, control], color="black", lw=2)
        ax.set_title(f"{label} pairs")
        ax.set_xticks(x, [f"{task}\n({'stage 1' if recipe == 'caption' else recipe})" for task, recipe in TASKS])
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("exact match, % (median; line: lowest-highest;\ndash: best control's median)")
    axes[0].legend(title="design", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return True
