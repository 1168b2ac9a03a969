"""The audit's figure, drawn from the audit's JSON alone: the score under the right picture beside its three controls
per kind, then either seen against held-out combinations or, when none are marked, what the wrong answers were.

Deterministic: the same numbers give the same PNG bytes (Agg, no Software stamp, a fixed hash salt)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
import numpy as np  # noqa: E402

from frozenbridge.core.controls import CONDITIONS  # noqa: E402

CONDITION_LABELS = {"right": "right picture", "blank": "blank picture", "wrong": "another picture",
                    "none": "no picture"}
CONDITION_COLORS = {"right": "#2f7d32", "blank": "#b0b0b0", "wrong": "#c0504d", "none": "#7a7a7a"}
FAILURE_CLASSES = ("another_question", "blank_answer", "other")
FAILURE_LABELS = {"another_question": "another question's answer", "blank_answer": "its blank-picture answer",
                  "other": "something else"}
FAILURE_COLORS = {"another_question": "#c0504d", "blank_answer": "#b0b0b0", "other": "#3b6fb6"}
TEST_COLORS = {"seen": "#3b6fb6", "heldout": "#e08a2c"}
TEST_LABELS = {"seen": "seen", "heldout": "held-out"}
NO_KIND = "(no kind)"
ALL = "all questions"
RC = {"svg.hashsalt": "frozenbridge-audit", "font.size": 9}


def kind_order(kinds) -> list[str]:
    """Named kinds sorted, questions without a kind last."""
    return sorted(k for k in kinds if k != NO_KIND) + ([NO_KIND] if NO_KIND in kinds else [])


def _groups(blocks: dict) -> list[tuple[str, dict]]:
    """(ALL, the overall block) first, then each kind's block."""
    return [(ALL, blocks["overall"]), *((k, blocks["kinds"][k]) for k in kind_order(blocks.get("kinds", {})))]


def _interval_bar(ax, x: float, bottom: float, top: float) -> None:
    """A vertical line with caps from bottom to top (drawn as a symmetric error bar: no negative lengths)."""
    ax.errorbar([x], [(bottom + top) / 2], yerr=[[(top - bottom) / 2]], fmt="none", ecolor="black", lw=1.2,
                capsize=3, zorder=3)


def _legend_below(ax, handles=None, labels=None, title=None) -> None:
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False,
              title=title, title_fontsize=7)


def _conditions_panel(ax, checks: dict) -> None:
    groups = _groups(checks)
    x = np.arange(len(groups))
    width = 0.8 / len(CONDITIONS)
    top = 100.0
    for j, cond in enumerate(CONDITIONS):
        at = x + (j - (len(CONDITIONS) - 1) / 2) * width
        ax.bar(at, [b["score"][cond] for _, b in groups], width, color=CONDITION_COLORS[cond],
               label=CONDITION_LABELS[cond])
        if cond == "right":
            for xi, (_, b) in zip(at, groups):
                control = b["score"]["right"] - b["gap"]
                lo, hi = b["gap_interval"]
                _interval_bar(ax, xi, control + lo, control + hi)
                top = max(top, control + hi)
    ax.scatter(x, [b["prior"] for _, b in groups], marker="D", s=24, color="black", edgecolors="white",
               linewidths=0.8, zorder=4, label="prior (training answers alone)")
    ax.set_xticks(x, [name for name, _ in groups], rotation=30 if len(groups) > 4 else 0,
                  ha="right" if len(groups) > 4 else "center")
    ax.set_ylim(0, top + 5)
    ax.set_ylabel("exact match, %")
    ax.set_xlabel("what the question needs (kind)")
    ax.set_title("Test questions with and without their picture")
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="black", lw=1.2, marker="_", markersize=7))
    labels.append("the gap's interval, drawn above the best control")
    _legend_below(ax, handles, labels)


def _heldout_panel(ax, seen_heldout: dict) -> None:
    sides = {test: seen_heldout.get(test) or {"overall": None, "kinds": {}} for test in ("seen", "heldout")}
    kinds = kind_order(set(sides["seen"].get("kinds", {})) | set(sides["heldout"].get("kinds", {})))
    names = [ALL, *kinds]
    x = np.arange(len(names))
    width = 0.2
    bars = [(test, what) for test in ("seen", "heldout") for what in ("right", "control")]
    for j, (test, what) in enumerate(bars):
        part = sides[test]  # a side with no test pictures draws no bars
        blocks = [part["overall"] if n == ALL else part.get("kinds", {}).get(n) for n in names]
        values = [np.nan if b is None else (b["score"]["right"] if what == "right" else b["score"][b["best_control"]])
                  for b in blocks]
        label = (f"{TEST_LABELS[test]}: right picture" if what == "right"
                 else f"{TEST_LABELS[test]}: best control")
        ax.bar(x + (j - 1.5) * width, values, width, color=TEST_COLORS[test], alpha=1.0 if what == "right" else 0.4,
               hatch=None if what == "right" else "//", edgecolor="white" if what == "right" else TEST_COLORS[test],
               label=label)
    ax.set_xticks(x, names, rotation=30 if len(names) > 4 else 0, ha="right" if len(names) > 4 else "center")
    ax.set_ylim(0, 105)
    ax.set_ylabel("exact match, %")
    ax.set_xlabel("what the question needs (kind)")
    ax.set_title("Combinations seen in training against held-out ones")
    _legend_below(ax)


def _failures_panel(ax, failures: dict) -> None:
    rows = [(ALL, failures), *((k, failures["kinds"][k]) for k in kind_order(failures.get("kinds", {})))]
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for cls in FAILURE_CLASSES:
        counts = np.array([r["classes"].get(cls, 0) for _, r in rows], dtype=float)
        ax.barh(y, counts, 0.6, left=left, color=FAILURE_COLORS[cls], label=FAILURE_LABELS[cls])
        left += counts
    ax.set_yticks(y, [name for name, _ in rows])
    ax.set_xlabel("wrong answers with the right picture")
    ax.set_ylabel("what the question needs (kind)")
    ax.set_title("What the wrong answers were")
    if not failures["wrong"]:
        ax.text(0.5, 0.5, "no wrong answers", transform=ax.transAxes, ha="center", va="center")
        ax.set_xlim(0, 1)
    _legend_below(ax, title="the wrong answer was")


def draw_audit(numbers: dict, path: Path) -> None:
    """One PNG of two panels: per kind (and all questions) the four conditions' scores, the prior as a diamond and
    the gap's interval drawn on the right-picture bar above the best control; then seen against held-out
    combinations when some test pictures are marked held-out, otherwise the wrong answers' classes per kind."""
    checks = numbers["checks"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(RC):
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.4))
        _conditions_panel(left, checks)
        if checks.get("seen_heldout") is not None:
            _heldout_panel(right, checks["seen_heldout"])
        else:
            _failures_panel(right, checks["failures"])
        fig.tight_layout()
        fig.savefig(path, dpi=100, metadata={"Software": None})
        plt.close(fig)
