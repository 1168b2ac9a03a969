"""Linear probes: can a linear classifier read a shape's color, or its kind, from the vectors under that shape?

Read at the encoder output, after the stage-1 connector, and after each later recipe's connector. A shape's vector is
the mean of the grid cells whose centers fall inside its bounding square (its stored center and size; the cell
holding its center when none do); after the connector, the mean of its tokens whose blocks hold those cells (the
design's `grid_tokens`: the MLP's and the codebook's merged blocks, cross-attention's per-patch keys' input). A
resampler's tokens are learned queries over the whole picture, no place of it, so there is no vector under a shape
after it: the stage says so in probes.json instead of probing.
Probes are trained on the shapes of training pictures (which never hold a held-out pair) and tested on the shapes of
seen-pair test pictures and on the held-out-pair shapes of held-out test pictures. A probe is a multinomial logistic
regression on standardized vectors, fitted full-batch by L-BFGS from zeros: deterministic.

Chance is computed from each test set itself: the share of its most common color (or kind), what always naming that
one class scores, and so the most a probe that ignores the vectors can score on that set. The held-out set holds only
the held-out pairs' shapes, so its chance is at least one over the number of held-out pairs, whatever the palette.
"""

from __future__ import annotations

import numpy as np
import torch

from frozenbridge.bridge.design import Design
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.linear_probe import fit_linear_probe
from frozenbridge.shapes.data.vocab import COLORS, KINDS
from frozenbridge.shapes.summary.replicates import summary
from frozenbridge.shapes.training.split_data import load_split

TARGETS = {"color": list(COLORS), "kind": list(KINDS)}


def cells_under(shape: dict, grid: tuple[int, int], image_size: int) -> list[int]:
    """Row-major indices of the grid cells whose centers lie inside the shape's bounding square."""
    rows, cols = grid
    h, w = image_size / rows, image_size / cols
    half = shape["size"] / 2
    inside = [r * cols + c for r in range(rows) for c in range(cols)
              if abs((c + 0.5) * w - shape["cx"]) <= half and abs((r + 0.5) * h - shape["cy"]) <= half]
    if inside:
        return inside
    r, c = min(int(shape["cy"] // h), rows - 1), min(int(shape["cx"] // w), cols - 1)
    return [r * cols + c]


def tokens_under(cells: list[int], grid: tuple[int, int], k: int, order: str) -> list[int]:
    """The merged tokens (k x k blocks, in the connector's token order) that hold any of the cells."""
    rows, cols = grid
    n_rows, n_cols = -(-rows // k), -(-cols // k)
    blocks = sorted({(cell // cols // k, cell % cols // k) for cell in cells})
    return [bc * n_rows + br if order == "columns" else br * n_cols + bc for br, bc in blocks]


def shape_vectors(vectors: torch.Tensor, scenes: list[list[dict]], index) -> np.ndarray:
    """(shapes, width): for every shape of every picture, the mean of `vectors[picture, index(shape)]`."""
    out = [vectors[pic, index(s)].float().mean(0) for pic, shapes in enumerate(scenes) for s in shapes]
    return torch.stack(out).numpy()


def labels(scenes: list[list[dict]], target: str) -> np.ndarray:
    names = TARGETS[target]
    return np.array([names.index(s[target if target == "color" else "kind"]) for shapes in scenes for s in shapes])


def chance(scenes: list[list[dict]], target: str) -> dict:
    """{"majority": the % of the set's shapes in its most common class, "classes": the classes the set holds}."""
    y = labels(scenes, target)
    if not len(y):
        return {"majority": 0.0, "classes": 0}
    counts = np.bincount(y)
    return {"majority": round(100.0 * float(counts.max()) / len(y), 2), "classes": int((counts > 0).sum())}


def chance_levels(tests: dict[str, list[list[dict]]]) -> dict:
    """{target: {test: chance(...)}} for every probe target and test set (probes.json's "chance")."""
    return {target: {test: chance(scenes, target) for test, scenes in tests.items()} for target in TARGETS}


def accuracy(predict, x: np.ndarray, y: np.ndarray) -> float:
    return round(100.0 * float((predict(x) == y).mean()), 2) if len(y) else 0.0


def probe_place(train: tuple[np.ndarray, list], tests: dict[str, tuple[np.ndarray, list]]) -> dict:
    """{target: {test: accuracy %}} for probes trained on `train` = (vectors, scenes)."""
    out: dict = {}
    for target, names in TARGETS.items():
        predict = fit_linear_probe(train[0], labels(train[1], target), len(names), l2=1e-3, iterations=200,
                                   standardize=True)
        out[target] = {test: accuracy(predict, x, labels(scenes, target)) for test, (x, scenes) in tests.items()}
    return out


def place_vectors(feats: torch.Tensor, scenes: list[list[dict]], grid: tuple[int, int], image_size: int,
                  connector: Design | None = None) -> np.ndarray:
    """Shape vectors at the encoder output (no connector) or after `connector`."""
    if connector is None:
        return shape_vectors(feats, scenes, lambda s: cells_under(s, grid, image_size))
    with torch.no_grad():
        tokens = torch.cat([connector(feats[i:i + 256].float()) for i in range(0, len(feats), 256)])
    merge, order = connector.grid_tokens
    return shape_vectors(tokens, scenes, lambda s: tokens_under(cells_under(s, grid, image_size), grid, merge, order))


def check_patches(meta: dict) -> tuple[int, int]:
    if not meta.get("grid"):
        raise FrozenbridgeError("probes need a grid of patch vectors; the cached features are pooled "
                                "(vision.features: pooled). Set vision.features: patches, or drop the probe stage "
                                "with `dvc repro` targets that leave it out")
    return tuple(meta["grid"])


def held_out_shapes(scenes: list[list[dict]], held_out: tuple[tuple[str, str], ...]) -> list[list[dict]]:
    """Only the shapes of held-out color-kind pairs, per picture."""
    return [[s for s in shapes if (s["color"], s["kind"]) in held_out] for shapes in scenes]


PROBE_SETS = ("train", "seen", "heldout")  # trained on training shapes; tested on seen-pair and held-out-pair shapes


def probe_inputs(params, pictures_dir, features_dir) -> tuple[dict, dict, dict]:
    """(scenes, features, the training split's meta) of the three probe sets, by PROBE_SETS name: every shape of the
    training and seen-pair test pictures, and only the held-out-pair shapes of the held-out test pictures."""
    splits = dict(zip(PROBE_SETS, (load_split(n, pictures_dir, features_dir, params.vision)
                                   for n in ("train", "test_seen", "test_heldout"))))
    scenes = {name: split.shapes for name, split in splits.items()}
    scenes["heldout"] = held_out_shapes(scenes["heldout"], params.shapes.data.held_out)
    return scenes, {name: split.feats for name, split in splits.items()}, splits["train"].meta


def probe_report(scenes: dict, places: dict[str, list[dict]]) -> dict:
    """What probes.json holds: shapes per set, each test set's chance, and per place the spread over its runs
    (each run's {target: {test: accuracy}})."""
    tests = ("seen", "heldout")
    result: dict = {"shapes": {name: sum(len(s) for s in sc) for name, sc in scenes.items()},
                    "chance": chance_levels({t: scenes[t] for t in tests}), "places": {}}
    for place, runs in places.items():
        result["places"][place] = {target: {test: summary([r[target][test] for r in runs]) for test in tests}
                                   for target in TARGETS}
        result["places"][place]["runs"] = len(runs)
    return result
