"""The digits study's summary over replicates, its plot data and its figure; reads JSON only (no torch)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from frozenbridge.core.errors import FrozenbridgeError  # noqa: E402
from frozenbridge.core.summary import spread  # noqa: E402
from frozenbridge.digits.paths import adapter_dir  # noqa: E402

CHANCE = 0.1


def load_results(tokens: tuple[int, ...], replicates: tuple[int, ...], runs: Path = Path("runs")) -> dict:
    """{tokens: {replicate: result.json}}, one clear line for the first run missing."""
    out: dict = {}
    for t in tokens:
        for r in replicates:
            path = adapter_dir(t, r, runs) / "result.json"
            if not path.is_file():
                raise FrozenbridgeError(f"{path}: not found; run `dvc repro digits_adapter` first")
            out.setdefault(t, {})[r] = json.loads(path.read_text())
    return out


def summarize(results: dict, ceiling: float) -> dict:
    """Accuracy after the last epoch (median, range, each replicate), before training, and what was written."""
    out = {"ceiling": ceiling, "chance": CHANCE, "by_tokens": {}}
    for t, reps in results.items():
        final = [r["accuracy"] for r in reps.values()]
        last = [r["history"][-1] for r in reps.values()]
        out["by_tokens"][str(t)] = {
            "trainable": next(iter(reps.values()))["trainable"],
            "accuracy": spread(final), "replicates": {str(k): r["accuracy"] for k, r in reps.items()},
            "share_of_ceiling": round(statistics.median(final) / ceiling, 6),
            "before": {"accuracy": spread([r["before"]["accuracy"] for r in reps.values()]),
                       "well_formed": spread([r["before"]["well_formed"] for r in reps.values()]),
                       "distinct": spread([r["before"]["distinct"] for r in reps.values()]),
                       "example": next(iter(reps.values()))["before"]["most_common"]},
            "well_formed": spread([h["well_formed"] for h in last]),
            "distinct": spread([h["distinct"] for h in last]),
            "language_unchanged": all(r["language_unchanged"] for r in reps.values()),
        }
    return out


def curve_rows(results: dict) -> list[list]:
    """plots/digits/accuracy.csv rows: run, epoch, accuracy."""
    return [[f"{t} tok, rep {r}", h["epoch"], h["accuracy"]]
            for t, reps in results.items() for r, res in reps.items() for h in res["history"]]


def accuracy_figure(results: dict, ceiling: float, out: Path) -> None:
    """Caption accuracy per epoch, one line a replicate, a color a token count, beside the ceiling and chance."""
    fig, ax = plt.subplots(figsize=(7, 4))
    colors = dict(zip(results, plt.cm.tab10.colors))
    for t, reps in results.items():
        for i, res in enumerate(reps.values()):
            h = res["history"]
            ax.plot([e["epoch"] for e in h], [e["accuracy"] for e in h], color=colors[t], lw=1.5, alpha=0.85,
                    label=f"{t} prefix token{'s' if t > 1 else ''}" if i == 0 else None)
    ax.axhline(ceiling, ls="--", color="#2f7d32", lw=1.2)
    ax.annotate(f"the frozen classifier's own accuracy ({ceiling:.3f})", (0, ceiling), xytext=(2, 5),
                textcoords="offset points", fontsize=8, color="#2f7d32")
    ax.axhline(CHANCE, ls="--", color="#7a7a7a", lw=1.2)
    ax.annotate("chance: one of ten words", (0, CHANCE), xytext=(2, 5), textcoords="offset points", fontsize=8,
                color="#7a7a7a")
    ax.set_ylim(0, 1)
    ax.set_xlabel("epoch of adapter training (0 = before)")
    ax.set_ylabel("test captions naming the right digit")
    ax.set_title("digits: only the adapter trains (one line a replicate)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
