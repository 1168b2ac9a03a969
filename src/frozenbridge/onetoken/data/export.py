"""Captioned folders made from other sources: the shapes study's pictures (the default run), or a `datasets` dataset
already in the local Hugging Face cache. Both write the imagefolder layout that `folder.read_folder` reads."""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes import interface as shapes

# the shapes splits that make each split of the folder, and the name of their test set
SHAPES_SPLITS = {"train": {"train": None}, "test": {split: name for name, split in shapes.TEST_SPLITS.items()}}


def _write_metadata(directory: Path, rows: list[dict]) -> None:
    (directory / "metadata.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def export_shapes(pictures: Path, out: Path) -> dict:
    """The shapes pictures (data/shapes/pictures) -> out/{train,test}/<split>-<id>.png + metadata.jsonl (the
    caption, and which shapes picture it is: shapes_split, shapes_id, and set = seen or heldout for the test
    pictures). Returns pictures a split."""
    tables = {s: shapes.read_pictures(s, pictures, ("id", "png", "caption"))
              for parts in SHAPES_SPLITS.values() for s in parts}  # every split read (and checked) before writing
    counts = {}
    with atomic_path(out) as tmp:
        for split, parts in SHAPES_SPLITS.items():
            (tmp / split).mkdir(parents=True)
            rows = []
            for shapes_split, set_name in parts.items():
                table = tables[shapes_split]
                for pid, png, caption in tqdm(zip(*(table.column(c).to_pylist() for c in ("id", "png", "caption"))),
                                              total=table.num_rows, desc=f"folder {shapes_split}", unit="pic"):
                    name = f"{shapes_split}-{pid:05d}.png"
                    (tmp / split / name).write_bytes(png)
                    row = {"file_name": name, "text": caption, "shapes_split": shapes_split, "shapes_id": pid}
                    rows.append(row if set_name is None else {**row, "set": set_name})
            _write_metadata(tmp / split, rows)
            counts[split] = len(rows)
    return counts


def export_dataset(name: str, out: Path, split: str, image_column: str, text_column: str,
                   limit: int | None = None) -> int:
    """A `datasets` dataset from the local cache (never downloaded) -> a captioned folder at `out`. A text column
    holding a list keeps every caption. Returns the pictures written."""
    import os

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import datasets
    except ImportError:
        raise FrozenbridgeError("reading a datasets id needs the datasets package; run ./setup.sh") from None
    try:
        if Path(name).is_dir() and (Path(name) / "dataset_info.json").is_file():
            rows = datasets.load_from_disk(name)  # a dataset saved with save_to_disk
            rows = rows[split] if isinstance(rows, datasets.DatasetDict) else rows
        else:
            rows = datasets.load_dataset(name, split=split)
    except Exception as err:  # datasets raises many kinds: name the dataset and what was wrong, in one line
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise FrozenbridgeError(f"{name!r} (split {split!r}) is not in the local datasets cache or cannot be read "
                                f"offline ({first}); download it once with datasets.load_dataset on a machine with "
                                "hub access, or point onetoken.folder at a folder of pictures") from None
    for column in (image_column, text_column):
        if column not in rows.column_names:
            raise FrozenbridgeError(f"{name!r}: no column {column!r}; its columns are {rows.column_names}")
    n = len(rows) if limit is None else min(limit, len(rows))
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        meta = []
        for i in tqdm(range(n), desc=f"export {name}", unit="pic"):
            row = rows[i]
            image, text = row[image_column], row[text_column]
            file_name = f"{i:06d}.png"
            image.convert("RGB").save(tmp / file_name)
            meta.append({"file_name": file_name, "text": text})
        _write_metadata(tmp, meta)
    return n
