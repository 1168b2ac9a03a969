"""What other studies read of the shapes study, and nothing else: the pictures' scenes (their shapes, left to
right), the captions written from them, the pictures' cached features averaged over the grid, the words, where the
files are, and the `shapes:` params section.

    the retrieval study   trains a text tower against these pictures (scenes, captions, grid means, data params)
    the one-token study   exports these pictures as a captioned folder, and scores its captions of them in the
                          retrieval study's space (grid means)

Everything here is defined in shapes.data, shapes.params and shapes.paths; this module only names it, so a study
that imports it depends on those and on nothing the shapes study trains or reports with.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from frozenbridge.core.params import VisionParams
from frozenbridge.shapes.data.scene import Shape, caption, with_article
from frozenbridge.shapes.data.vocab import COLORS, KINDS, SPLITS, TEST_SPLITS, TESTS
from frozenbridge.shapes.params import ShapesParams
from frozenbridge.shapes.paths import FEATURES, PICTURES

if TYPE_CHECKING:
    import torch

__all__ = ["COLORS", "KINDS", "SPLITS", "TEST_SPLITS", "TESTS", "FEATURES", "PICTURES", "Shape", "ShapesParams",
           "caption", "grid_means", "read_pictures", "scenes", "scenes_and_grid_means", "with_article"]


def read_pictures(split: str, pictures: Path = PICTURES, columns: tuple[str, ...] = ("id", "png", "caption")):
    """A split's rows (pyarrow Table): id, the PNG bytes, the caption (or the columns asked for)."""
    from frozenbridge.shapes.data import read

    return read.read_pictures(split, pictures, list(columns))


def scenes(split: str, pictures: Path = PICTURES) -> list[list[dict]]:
    """Every picture's shapes (color, kind, cx, cy, size), left to right, in picture order."""
    return read_pictures(split, pictures, ("shapes",)).column("shapes").to_pylist()


def grid_means(split: str, vision: VisionParams, features: Path = FEATURES) -> tuple[list[int], torch.Tensor]:
    """(picture ids, each picture's cached features averaged over its grid (pictures, width), float32)."""
    from frozenbridge.shapes.data import read  # the reading modules import torch: only when called

    ids, feats, _ = read.read_features(split, features, vision)
    return ids.tolist(), feats.float().mean(1)


def scenes_and_grid_means(split: str, vision: VisionParams, pictures: Path = PICTURES,
                          features: Path = FEATURES) -> tuple[list[list[dict]], torch.Tensor]:
    """Both of the above for one split, checked to be the same pictures in the same order."""
    from frozenbridge.shapes.data import read

    table, feats, _ = read.read_split(split, pictures, features, vision, ["shapes"])
    return table.column("shapes").to_pylist(), feats.float().mean(1)
