"""The three splits (train, test on seen pairs, test on held-out pairs), each from its own seed, as Parquet rows."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from frozenbridge.core.seeds import spawn
from frozenbridge.shapes.data.draw import place, png_bytes, render
from frozenbridge.shapes.data.scene import caption, questions
from frozenbridge.shapes.data.vocab import COLORS, KINDS, SPLITS
from frozenbridge.shapes.params import DataParams

SCHEMA = pa.schema([
    ("id", pa.int32()),
    ("png", pa.binary()),
    ("shapes", pa.list_(pa.struct([("color", pa.string()), ("kind", pa.string()), ("cx", pa.float32()),
                                   ("cy", pa.float32()), ("size", pa.float32())]))),
    ("caption", pa.string()),
    ("questions", pa.list_(pa.struct([("type", pa.string()), ("question", pa.string()), ("answer", pa.string()),
                                      ("about_held_out", pa.bool_())]))),
])


def split_seeds(seed: int) -> dict[str, np.random.SeedSequence]:
    """Independent streams per split from shapes.data.seed, so changing one split's size never changes another's
    pictures."""
    return spawn(SPLITS, seed)


def all_pairs() -> list[tuple[str, str]]:
    return [(c, k) for c in COLORS for k in KINDS]


def sample_row(rng: np.random.Generator, split: str, cfg: DataParams) -> dict | None:
    """One picture's row, or None when a held-out draw has no question about a held-out pair (redrawn)."""
    held = frozenset(cfg.held_out)
    seen = [p for p in all_pairs() if p not in held]
    n = int(rng.integers(cfg.shapes[0], cfg.shapes[1] + 1))
    if split == "test_heldout":
        held_list = sorted(held)
        forced = held_list[rng.integers(len(held_list))]
        others = [all_pairs()[i] for i in rng.integers(len(all_pairs()), size=n - 1)]
        pairs = others + [forced]
        rng.shuffle(pairs)
    else:
        pairs = [seen[i] for i in rng.integers(len(seen), size=n)]
    shapes = place(rng, pairs, cfg.image_size, cfg.shape_size)
    qs = questions(shapes, held)
    if split == "test_heldout":
        qs = [q for q in qs if q.about_held_out]
        if not any(q.type != "count" for q in qs):
            return None
    return {
        "png": png_bytes(render(shapes, cfg.image_size)),
        "shapes": [s.to_dict() for s in shapes],
        "caption": caption(shapes),
        "questions": [q.to_dict() for q in qs],
    }


def generate_split(split: str, n: int, cfg: DataParams, seed: np.random.SeedSequence) -> pa.Table:
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    with tqdm(total=n, desc=f"generate {split}", unit="pic") as bar:
        while len(rows) < n:
            row = sample_row(rng, split, cfg)
            if row is not None:
                rows.append({"id": len(rows), **row})
                bar.update()
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def summary(tables: dict[str, pa.Table]) -> dict:
    """Counts per split and the training color x kind table (held-out pairs must read 0)."""
    out: dict = {}
    for split, table in tables.items():
        qtypes = Counter(q["type"] for qs in table.column("questions").to_pylist() for q in qs)
        out[split] = {"pictures": table.num_rows,
                      **{f"questions_{t}": qtypes.get(t, 0) for t in ("count", "binding", "leftmost")}}
    pairs = Counter((s["color"], s["kind"]) for shapes in tables["train"].column("shapes").to_pylist() for s in shapes)
    out["train_color_kind"] = {c: {k: pairs.get((c, k), 0) for k in KINDS} for c in COLORS}
    return out
