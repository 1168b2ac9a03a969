"""The sweep's learning curves, one panel a design: percent of the rule's training captions exact against the step,
a line a setting, the picked setting drawn bold, the plan's threshold dashed."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.comparison.sweep.plan import Plan
from frozenbridge.comparison.sweep.sweep import grid, kept_row


def draw_curves(plan: Plan, out: Path, picked: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    designs = plan.designs
    fig, axes = plt.subplots(1, len(designs), figsize=(4.2 * len(designs), 3.6), sharey=True, squeeze=False)
    for ax, design in zip(axes[0], designs):
        chosen = picked.get("picked", {}).get(design, {}).get("setting")
        drawn = 0
        for setting in grid(plan, out, design):
            row = kept_row(out, design, setting, plan)
            if row is None:
                continue
            steps, exact = [p[0] for p in row["curve"]], [p[1] for p in row["curve"]]
            ax.plot(steps, exact, lw=2.6 if setting.name == chosen else 1.0,
                    label=setting.name + (" (picked)" if setting.name == chosen else ""))
            drawn += 1
        ax.axhline(plan.threshold, ls="--", color="grey", lw=0.8)
        ax.set_title(design)
        ax.set_xlabel("stage-1 step")
        ax.set_xlim(0, plan.cap)
        ax.set_ylim(0, 100)
        if drawn:
            ax.legend(fontsize=6, loc="upper left")
        else:
            ax.text(0.5, 0.5, "no run kept yet", ha="center", va="center", transform=ax.transAxes, color="grey")
    axes[0][0].set_ylabel("training captions exact, %")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
