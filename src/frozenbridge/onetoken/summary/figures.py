"""The one-token study's figures: the alignment heatmap (the reference's check that the scoring space pairs a
picture with its own caption), or the reason agreement could not be scored."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _thumbnails(ax, files: list[str], k: int) -> None:
    """Each row's picture beside its row, so the reader sees what the vector was made from."""
    from matplotlib.offsetbox import AnnotationBbox, OffsetImage
    from PIL import Image

    for i, file in enumerate(files[:k]):
        if not Path(file).is_file():  # the folder moved since it was encoded: the row keeps its numbers
            continue
        with Image.open(file) as im:
            thumb = np.asarray(im.convert("RGB").resize((48, 48)))
        ax.add_artist(AnnotationBbox(OffsetImage(thumb, zoom=0.75), (-0.9, i), xycoords="data", frameon=False,
                                     annotation_clip=False))


def alignment_heatmap(matrix: np.ndarray, captions: list[str], files: list[str], check: dict, scorer: str,
                      path: Path, shown: int) -> None:
    """The first `shown` pictures (drawn beside their rows) against their captions, with the whole test set's
    numbers in the title."""
    k = min(shown, len(captions))
    if shown > len(captions):
        logging.getLogger("frozenbridge.onetoken").warning(
            "onetoken.agreement.shown=%d: the test set holds %d pictures; showing %d", shown, len(captions), k)
    panel = matrix[:k, :k]
    fig, ax = plt.subplots(figsize=(1.0 * k + 3.2, 0.75 * k + 2.4))
    im = ax.imshow(panel, cmap="Blues")
    for i in range(k):
        for j in range(k):
            ax.text(j, i, f"{panel[i, j]:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if panel[i, j] > panel.min() + 0.7 * np.ptp(panel) else "#333333")
    ax.set_xticks(range(k), ["\n".join(textwrap.wrap(c, 22)[:3]) for c in captions[:k]], rotation=40, ha="right",
                  fontsize=7)
    ax.set_yticks(range(k), [""] * k)
    _thumbnails(ax, files, k)
    ax.set_xlabel("caption (the folder's)")
    fig.colorbar(im, ax=ax, fraction=0.04, label="cosine")
    ax.set_title(f"Own caption nearest for {check['own_nearest']:.1f}% of {check['pictures']} test pictures "
                 f"(chance {check['chance']:.1f}%)\nmatched {check['matched']:.3f} vs mismatched "
                 f"{check['mismatched']:.3f}\nspace: {textwrap.shorten(scorer, 90)}", fontsize=9)
    fig.tight_layout()
    _save(fig, path)


def unavailable(why: str, path: Path) -> None:
    """The figure's place when agreement cannot be scored: the reason, so the file never looks like a result."""
    fig, ax = plt.subplots(figsize=(7, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, "\n".join(textwrap.wrap(why, 80)), ha="center", va="center", fontsize=9)
    _save(fig, path)
