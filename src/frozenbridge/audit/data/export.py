"""The shapes study's own pictures and questions as an audit folder (one command: `frozenbridge audit-export
OUT`, or the audit_folder stage); its audit is set beside the study's table (evaluation.agreement).

train/ holds the study's training pictures with their captions and questions; test/ holds its seen-pair and
held-out-pair test pictures, the latter marked "heldout": true. A question's kind is its task (count, binding,
leftmost). The folder's root also holds exported.json, which says where it came from: the audit reads it to set its
numbers beside the study's (the folder reader reads only train/ and test/).
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from frozenbridge.audit.data.folder import METADATA
from frozenbridge.audit.evaluation.agreement import EXPORTED
from frozenbridge.core.atomic import atomic_path
from frozenbridge.shapes import interface as shapes

PARTS = {"train": ("train",), "test": (shapes.TEST_SPLITS["seen"], shapes.TEST_SPLITS["heldout"])}
COLUMNS = ("id", "png", "caption", "questions")


def _row(name: str, caption: str, questions: list[dict], heldout: bool) -> dict:
    row = {"file_name": name, "text": caption,
           "questions": [{"question": q["question"], "answer": q["answer"], "kind": q["type"]} for q in questions]}
    return {**row, "heldout": True} if heldout else row


def export_shapes(pictures: Path, out: Path) -> dict:
    """data/shapes/pictures -> out/{train,test}/<split>-<id>.png with metadata.jsonl, and out/exported.json; returns
    pictures and questions a split. Written atomically: out appears whole or not at all."""
    tables = {s: shapes.read_pictures(s, pictures, COLUMNS) for parts in PARTS.values() for s in parts}
    counts = {}
    with atomic_path(out) as tmp:
        for split, parts in PARTS.items():
            (tmp / split).mkdir(parents=True)
            rows = []
            for part in parts:
                table = tables[part]
                for pid, png, caption, questions in tqdm(zip(*(table.column(c).to_pylist() for c in COLUMNS)),
                                                         total=table.num_rows, desc=f"export {part}", unit="pic"):
                    name = f"{part}-{pid:05d}.png"
                    (tmp / split / name).write_bytes(png)
                    rows.append(_row(name, caption, questions, part == shapes.TEST_SPLITS["heldout"]))
            (tmp / split / METADATA).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
            counts[split] = {"pictures": len(rows), "questions": sum(len(r["questions"]) for r in rows)}
        (tmp / EXPORTED).write_text(json.dumps({"from": "shapes", "pictures": str(pictures), "splits": counts},
                                               indent=2, sort_keys=True) + "\n")
    return counts
