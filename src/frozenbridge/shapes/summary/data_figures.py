"""A contact sheet of generated pictures with their captions, and the training color x kind heatmap."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from PIL import Image  # noqa: E402


def contact_sheet(tables: dict[str, pa.Table], path: Path, per_split: int = 4) -> None:
    fig, axes = plt.subplots(len(tables), per_split, figsize=(3.2 * per_split, 3.6 * len(tables)), squeeze=False)
    for r, (split, table) in enumerate(tables.items()):
        rows = table.slice(0, per_split).to_pylist()
        for c in range(per_split):
            ax = axes[r][c]
            ax.axis("off")
            if c >= len(rows):
                continue
            ax.imshow(Image.open(io.BytesIO(rows[c]["png"])))
            q = next((q for q in rows[c]["questions"] if q["type"] != "count"), rows[c]["questions"][0])
            text = textwrap.fill(rows[c]["caption"], 44)
            ax.set_title(f"{split} #{rows[c]['id']}\n{text}\n{q['question']} {q['answer']}", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def color_kind_heatmap(counts: dict[str, dict[str, int]], held_out: tuple, path: Path) -> None:
    colors, kinds = list(counts), list(next(iter(counts.values())))
    grid = np.array([[counts[c][k] for k in kinds] for c in colors])
    fig, ax = plt.subplots(figsize=(4, 4.2))
    ax.imshow(grid, cmap="Blues")
    for i, c in enumerate(colors):
        for j, k in enumerate(kinds):
            mark = " (held out)" if (c, k) in held_out else ""
            ax.text(j, i, f"{grid[i, j]}{mark}", ha="center", va="center", fontsize=7,
                    color="white" if grid[i, j] > grid.max() / 2 else "black")
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_yticks(range(len(colors)), colors)
    ax.set_title("shapes in training pictures")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
