"""The digits study's figure: caption accuracy per epoch of adapter training, beside the ceiling and chance."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from frozenbridge.digits.summary.replicates import CHANCE  # noqa: E402


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
