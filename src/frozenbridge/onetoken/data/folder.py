"""A folder of captioned pictures in the Hugging Face `datasets` imagefolder layout, read and checked before work.

    my_pictures/metadata.jsonl       {"file_name": "a.jpg", "text": "a dog on a beach"}   one JSON object a line
    my_pictures/a.jpg                {"file_name": "b.png", "text": ["two cats", "cats on a sofa"]}   several captions
    my_pictures/b.png

or metadata.csv with the columns file_name and text (a picture's row repeated for several captions). Pictures may
sit in subfolders (file_name is the path from the metadata file). A folder with train/ and test/ subfolders, each
with its own metadata file, keeps that split; otherwise `test_fraction` of the pictures, drawn with the data seed,
are the test set. Other columns are kept with each picture (the shapes export says which shapes picture it is).

Every problem (no folder, no metadata, a malformed line, a missing column, an empty caption, a picture that is
absent, unreadable or not an image, no pictures at all) is one line naming the file, before any encoding starts.
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.picture_folder import check_picture, json_rows, unlisted_pictures

log = logging.getLogger("frozenbridge.onetoken")
METADATA = ("metadata.jsonl", "metadata.csv")
SPLITS = ("train", "test")


@dataclass(frozen=True)
class Picture:
    path: Path
    captions: tuple[str, ...]
    extra: dict = field(default_factory=dict, hash=False, compare=False)  # the metadata's other columns

    @property
    def file_name(self) -> str:
        return self.path.name


def _captions(value, where: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise FrozenbridgeError(f"{where}: text must be a non-empty caption or a list of them, not {value!r}")
    return [v.strip() for v in values]


def _rows_csv(path: Path) -> list[tuple[str, list[str], dict, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return [(r.get("file_name"), r.get("text"), r, f"{path}:{n}") for n, r in enumerate(reader, 2)]


def read_metadata(directory: Path) -> list[Picture]:
    """The pictures one metadata file names, each with all its captions, in the file's order; checked."""
    found = [directory / name for name in METADATA if (directory / name).is_file()]
    if not found:
        raise FrozenbridgeError(f"{directory}: no metadata.jsonl or metadata.csv (the datasets imagefolder layout: "
                                "one row a picture with file_name and text)")
    if len(found) > 1:
        raise FrozenbridgeError(f"{directory}: both metadata.jsonl and metadata.csv; keep one")
    path = found[0]
    rows = json_rows(path) if path.suffix == ".jsonl" else _rows_csv(path)
    pictures: dict[str, tuple[list[str], dict]] = {}
    for file_name, value, obj, where in rows:
        for column, v in (("file_name", file_name), ("text", value)):
            if v is None:
                raise FrozenbridgeError(f"{where}: no {column} column (expected file_name and text)")
        if not isinstance(file_name, str) or not file_name.strip():
            raise FrozenbridgeError(f"{where}: file_name must name a picture, not {file_name!r}")
        captions = _captions(value, where)
        entry = pictures.setdefault(file_name, ([], {k: v for k, v in obj.items() if k not in ("file_name", "text")}))
        entry[0].extend(captions)
    if not pictures:
        raise FrozenbridgeError(f"{path}: names no pictures")
    out = []
    for file_name, (captions, extra) in pictures.items():
        out.append(Picture(check_picture(directory / file_name, path), tuple(captions), extra))
    return out


def read_folder(folder: str | Path, test_fraction: float, seed: int) -> dict[str, list[Picture]]:
    """{"train": pictures, "test": pictures} of a captioned folder, every picture checked."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FrozenbridgeError(f"onetoken.folder = {str(folder)!r}: no such folder (expected pictures with a "
                                "metadata.jsonl or metadata.csv)")
    if all((folder / s).is_dir() for s in SPLITS) and not any((folder / m).is_file() for m in METADATA):
        splits = {s: read_metadata(folder / s) for s in SPLITS}
    else:
        pictures = read_metadata(folder)
        if len(pictures) < 2:
            raise FrozenbridgeError(f"{folder}: {len(pictures)} picture; at least 2 are needed (one to train on, "
                                    "one to test)")
        order = np.random.default_rng([seed, 0x0FE7]).permutation(len(pictures))
        n_test = min(len(pictures) - 1, max(1, round(test_fraction * len(pictures))))
        test = set(order[:n_test].tolist())
        splits = {"train": [p for i, p in enumerate(pictures) if i not in test],
                  "test": [p for i, p in enumerate(pictures) if i in test]}
    unlisted = unlisted_pictures(folder, [p.path for s in splits.values() for p in s])
    if unlisted:
        log.warning("%s: %d pictures have no caption in the metadata and are left out", folder, unlisted)
    return splits
