"""Placing shapes without overlap and drawing them on a white square."""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageDraw

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.data.scene import COLORS, Shape

SUPERSAMPLE = 2  # draw at 2x and downsample: smooth edges at no real cost
MAX_TRIES = 2000


def most_that_fit(image_size: int, min_fraction: float) -> int:
    """An upper bound on how many shapes `place` can ever fit: the smallest shapes, packed as densely as discs can be.

    Centers stay in a square of side L and at least d apart (the bounding circles' rule in `place`); discs of
    diameter d around them fill at most pi / (2 sqrt 3) (the hexagonal density) of the square of side L + d.
    """
    size = min_fraction * image_size
    d = size * math.sqrt(2) + 2
    side = image_size - size - 4
    return max(1, int(2 * (side + d) ** 2 / (math.sqrt(3) * d * d)))


def place(rng: np.random.Generator, pairs: list[tuple[str, str]], image_size: int,
          size_range: tuple[float, float]) -> list[Shape]:
    """Random non-overlapping shapes with distinct horizontal order, sorted left to right.

    Each shape's bounding circle stays clear of the others', and no two centers share a column band
    (at least 4% of the picture apart), so 'leftmost' and the caption's order are never ambiguous.
    """
    min_dx = 0.04 * image_size
    for _ in range(MAX_TRIES):
        shapes: list[Shape] = []
        for color, kind in pairs:
            size = rng.uniform(*size_range) * image_size
            half = size / 2
            cx, cy = rng.uniform(half + 2, image_size - half - 2, size=2)
            reach = half * math.sqrt(2)
            clash = any(
                abs(cx - o.cx) < min_dx or math.hypot(cx - o.cx, cy - o.cy) < reach + o.size / 2 * math.sqrt(2) + 2
                for o in shapes
            )
            if clash:
                break
            shapes.append(Shape(color, kind, round(float(cx), 2), round(float(cy), 2), round(float(size), 2)))
        else:
            return sorted(shapes, key=lambda s: s.cx)
    raise FrozenbridgeError(
        f"could not place {len(pairs)} shapes of up to {size_range[1]:.2f} of a {image_size}px picture without overlap "
        f"in {MAX_TRIES} tries; lower shapes.data.shapes or shapes.data.shape_size"
    )


def render(shapes: list[Shape], image_size: int) -> Image.Image:
    s = SUPERSAMPLE
    img = Image.new("RGB", (image_size * s, image_size * s), "white")
    draw = ImageDraw.Draw(img)
    for sh in shapes:
        cx, cy, half = sh.cx * s, sh.cy * s, sh.size * s / 2
        fill = COLORS[sh.color]
        if sh.kind == "circle":
            draw.ellipse([cx - half, cy - half, cx + half, cy + half], fill=fill)
        elif sh.kind == "square":
            h = half * 0.85
            draw.rectangle([cx - h, cy - h, cx + h, cy + h], fill=fill)
        elif sh.kind == "triangle":
            draw.polygon([(cx, cy - half), (cx - half, cy + half * 0.8), (cx + half, cy + half * 0.8)], fill=fill)
        else:  # a Shape is only built from KINDS
            raise ValueError(sh.kind)
    return img.resize((image_size, image_size), Image.Resampling.BOX)


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def blank(image_size: int) -> Image.Image:
    """The blank picture of the controls: the same white square with nothing on it."""
    return Image.new("RGB", (image_size, image_size), "white")
