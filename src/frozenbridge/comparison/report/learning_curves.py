"""The equal-steps view's learning curves on one figure: every setting's stage-1 training loss to the view's last
step (metrics/shapes/stage1_loss.json, the loss at every step, kept by comparison from plots/shapes/loss.csv),
the median over replicates of a running mean, with the lowest-highest band; the legend gives each setting's share of
the stop rule's training captions exact at the last step (its stage1.json's last check), median over replicates."""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from frozenbridge.core.summary import read_json_if_present  # noqa: E402
from frozenbridge.comparison.report.tables import EQUAL_STEPS, designs  # noqa: E402

WINDOW = 50  # steps in the running mean: one step's loss is one batch of 16 captions


def figure(view: str = EQUAL_STEPS) -> str:
    return f"{view}/stage1_loss.png"


def figure_line(view: str = EQUAL_STEPS) -> str:
    """The markdown of the figure, from docs/."""
    return (f"![Stage-1 training loss of every setting, {WINDOW}-step running mean, median and range over "
            f"replicates](../{figure(view)})")


def running_mean(values: list[float], window: int = WINDOW) -> np.ndarray:
    """The mean of each step's last `window` losses (fewer at the start)."""
    sums = np.cumsum(np.asarray(values, dtype=float))
    out = sums.copy()
    out[window:] = sums[window:] - sums[:-window]
    return out / np.minimum(np.arange(1, len(values) + 1), window)


def last_share(metrics: Path) -> float | None:
    """The median over replicates of the share exact at each replicate's last stop-rule check."""
    found = read_json_if_present(metrics / "stage1.json") or {}
    shares = [r["curve"][-1][1] for r in found.values() if r.get("curve")]
    return statistics.median(shares) if shares else None


def draw(root: Path, out: Path, view: str = EQUAL_STEPS) -> bool:
    """The figure, or False and nothing drawn while fewer than two of the view's settings keep their losses."""
    curves = {}
    for name, (_, metrics) in designs(root, view).items():
        losses = read_json_if_present(metrics / "stage1_loss.json") or {}
        runs = [np.asarray([loss for _, loss in losses[r]]) for r in sorted(losses, key=int)]
        if runs:
            n = min(len(r) for r in runs)
            smooth = np.stack([running_mean(list(r[:n])) for r in runs])
            curves[name] = (smooth, last_share(metrics), len(runs))
    if len(curves) < 2:
        return False
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for (name, (smooth, share, runs)), color in zip(curves.items(), plt.cm.tab10.colors):
        steps = np.arange(1, smooth.shape[1] + 1)
        replicates = f"{runs} replicate" + ("" if runs == 1 else "s")
        label = f"{name}, {replicates}" + (f", {share:g}% of training captions exact at the end"
                                          if share is not None else "")
        ax.plot(steps, np.median(smooth, axis=0), color=color, lw=1.5, label=label)
        ax.fill_between(steps, smooth.min(axis=0), smooth.max(axis=0), color=color, alpha=0.15, lw=0)
    ax.set_xlabel("stage-1 step")
    ax.set_ylabel(f"training loss ({WINDOW}-step running mean;\nline: median, band: lowest-highest)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return True
