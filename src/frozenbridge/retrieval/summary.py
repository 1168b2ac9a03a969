"""The retrieval study over replicates: recall per text tower, test set, caption length and direction (median and
range), chance, and the phrasing diagnostic; its plot rows and figure. Reads JSON only (no torch)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from frozenbridge.core.errors import FrozenbridgeError  # noqa: E402
from frozenbridge.core.summary import spread  # noqa: E402
from frozenbridge.retrieval.paths import run_dir  # noqa: E402
from frozenbridge.retrieval.texts import LENGTHS  # noqa: E402
from frozenbridge.shapes.vocab import TESTS  # noqa: E402

WAYS = ("image_to_text", "text_to_image")
KS = ("R@1", "R@5")
TOWER_LABELS = {"adaptor": "frozen LM + adaptor", "linear": "frozen LM + linear", "scratch": "from scratch",
                "vision_text": "vision model's text tower"}
TEST_LABELS = {"seen": "seen pairs", "heldout": "held-out pairs"}


def load_results(towers: tuple[str, ...], replicates: tuple[int, ...], runs: Path = Path("runs")) -> dict:
    """{tower: {replicate: result.json}}, one clear line for the first run missing."""
    out: dict = {}
    for tower in towers:
        for rep in replicates:
            path = run_dir(tower, rep, runs) / "result.json"
            if not path.is_file():
                raise FrozenbridgeError(f"{path}: not found; run `dvc repro retrieval_train` first")
            out.setdefault(tower, {})[rep] = json.loads(path.read_text())
    return out


def summarize(results: dict) -> dict:
    """Every number the README and figure show, from the runs' results."""
    first = next(iter(next(iter(results.values())).values()))
    out = {"chance": first["chance"], "towers": {}, "phrasing_before": {}}
    for tower, reps in results.items():
        runs = list(reps.values())
        out["towers"][tower] = {
            "trainable": runs[0]["trainable"], "final_loss": spread(r["final_loss"] for r in runs),
            "recall": {test: {length: {way: {k: spread(r["recall"][test][length][way][k] for r in runs) for k in KS}
                                       for way in WAYS} for length in LENGTHS} for test in TESTS},
            "phrasing": {test: spread(r["phrasing"][test]["after"] for r in runs) for test in TESTS},
        }
        for r in runs:
            for test in TESTS:
                before = r["phrasing"][test]["before"]
                if before is not None:
                    key = "vision_text" if tower == "vision_text" else "lm"
                    out["phrasing_before"].setdefault(key, {})[test] = before
    return out


def recall_rows(summary: dict) -> list[list]:
    """plots/retrieval/recall.csv rows: tower, test, length, direction, group label, R@1 median, min, max, chance."""
    rows = []
    for tower, t in summary["towers"].items():
        for test in TESTS:
            for length in LENGTHS:
                for way in WAYS:
                    s = t["recall"][test][length][way]["R@1"]
                    rows.append([TOWER_LABELS[tower], test, length, way.replace("_", " "),
                                 f"{length}, {TEST_LABELS[test]}", s["median"], s["min"], s["max"],
                                 summary["chance"][test][length][way]["R@1"]])
    return rows


RECALL_HEADER = ["tower", "test", "length", "direction", "group", "median", "min", "max", "chance"]


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
