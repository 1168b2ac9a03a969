"""The retrieval study's figure: recall@1 by text tower, caption length and test set, beside chance."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from frozenbridge.retrieval.data.texts import LENGTHS  # noqa: E402
from frozenbridge.retrieval.summary.replicates import TEST_LABELS, TOWER_LABELS, WAYS  # noqa: E402
from frozenbridge.shapes.interface import TESTS  # noqa: E402


def recall_figure(summary: dict, path: Path) -> None:
    """R@1 by text tower, caption length and test set: one panel a direction, bars = median, lines = range,
    dashes = chance."""
    towers = list(summary["towers"])
    groups = [(length, test) for length in LENGTHS for test in TESTS]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    width = 0.8 / len(towers)
    colors = plt.get_cmap("tab10")
    for ax, way in zip(axes, WAYS):
        for g, (length, test) in enumerate(groups):
            for i, tower in enumerate(towers):
                s = summary["towers"][tower]["recall"][test][length][way]["R@1"]
                x = g - 0.4 + width * (i + 0.5)
                ax.bar(x, s["median"], width, color=colors(i), label=TOWER_LABELS[tower] if g == 0 else None)
                ax.plot([x, x], [s["min"], s["max"]], color="black", linewidth=1)
            c = summary["chance"][test][length][way]["R@1"]
            ax.plot([g - 0.45, g + 0.45], [c, c], color="black", linestyle="--", linewidth=1,
                    label="chance" if g == 0 else None)
        ax.set_xticks(range(len(groups)), [f"{length}\n{TEST_LABELS[test]}" for length, test in groups])
        ax.set_title(way.replace("_", " ").replace(" to ", " → "))
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("recall@1 (median over replicates)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.suptitle("Retrieval on the shapes test pictures: recall@1 by text tower, caption length and test set")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
