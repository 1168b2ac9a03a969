"""A small example folder in the audit's format, drawn the same every time: 12 training and 6 test pictures of
coloured shapes, each with a caption and colour, count and shape questions; the two test pairs no training picture
shows (a red triangle, a blue circle) are marked held out. The tests and the README's walk-through use it."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw

from frozenbridge.audit.data.folder import METADATA
from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.errors import FrozenbridgeError


COLORS = {"red": (220, 40, 40), "green": (40, 160, 70), "blue": (50, 80, 220)}
HELD_OUT = (("red", "triangle"), ("blue", "circle"))  # never drawn in training
SEEN = tuple((c, s) for c in COLORS for s in ("circle", "square", "triangle") if (c, s) not in HELD_OUT)
TEST = (("green", "circle", 2), ("red", "square", 3), ("blue", "triangle", 1), ("green", "triangle", 3),
        ("red", "triangle", 2), ("blue", "circle", 1))  # the last two are the held-out pairs
PLACES = {1: ((32, 32),), 2: ((17, 32), (47, 32)), 3: ((17, 20), (47, 20), (32, 46))}
WORDS = {1: "one", 2: "two", 3: "three"}
TEST_SHIFT = 3  # test pictures are drawn 3 pixels right and down: the same content, never the same picture


def _draw(color: str, shape: str, count: int, shift: int = 0) -> Image.Image:
    """The picture; `shift` moves every shape right and down by that many pixels (a test picture is a new picture
    of familiar content, never a copy of a training one: the audit flags copies)."""
    im = Image.new("RGB", (64, 64), "white")
    draw, r, fill = ImageDraw.Draw(im), 9, COLORS[color]
    for x, y in ((x + shift, y + shift) for x, y in PLACES[count]):
        if shape == "circle":
            draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)
        elif shape == "square":
            draw.rectangle((x - r, y - r, x + r, y + r), fill=fill)
        else:
            draw.polygon(((x, y - r), (x + r, y + r), (x - r, y + r)), fill=fill)
    return im


def _row(file_name: str, color: str, shape: str, count: int, i: int, heldout: bool) -> dict:
    one = count == 1
    asked = {"color": ("What color is the shape?" if one else "What color are the shapes?", color),
             "count": ("How many shapes are there?", str(count)),
             "shape": ("What shape is it?" if one else "What shape are they?", shape)}
    kinds = (("color", "count", "shape"), ("color", "shape"), ("color", "count"))[i % 3]
    caption = f"{WORDS[count]} {color} {shape}{'' if one else 's'}"
    row = {"file_name": file_name, "text": caption,
           "questions": [{"question": asked[k][0], "answer": asked[k][1], "kind": k} for k in kinds]}
    return {**row, "heldout": True} if heldout else row


def write_example_folder(path: str | Path) -> Path:
    """A small folder in this format at `path` (which must not exist or be empty): 12 training and 6 test 64x64
    pictures of one to three coloured shapes, each with a caption and 2-3 questions of kinds color, count and shape;
    the test pictures of red triangles and blue circles, pairs no training picture shows, are marked heldout; every
    test picture is drawn a few pixels off, so none repeats a training picture. The same bytes every time."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise FrozenbridgeError(f"{path}: already exists; the example folder is written to a new or empty folder")
    train = [(*SEEN[i % len(SEEN)], 1 + i % 3) for i in range(12)]
    with atomic_path(path) as tmp:
        for split, pictures in (("train", train), ("test", TEST)):
            (tmp / split).mkdir(parents=True)
            rows = []
            for i, (color, shape, count) in enumerate(pictures):
                file_name = f"pic{i + 1:02d}.png"
                _draw(color, shape, count, TEST_SHIFT if split == "test" else 0).save(tmp / split / file_name)
                rows.append(_row(file_name, color, shape, count, i, (color, shape) in HELD_OUT))
            (tmp / split / METADATA).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
