"""What every picture folder a study reads shares (the `datasets` imagefolder layout: pictures beside a
metadata.jsonl, one JSON object a line): its rows read with the line each came from, a picture checked before any
work, and the pictures no row names counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from PIL import Image, UnidentifiedImageError

from frozenbridge.core.errors import FrozenbridgeError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff"}


def json_rows(path: Path) -> list[tuple[object, object, dict, str]]:
    """(file_name, text, the row, "<file>:<line>") for each non-blank line; one line naming the row for a line that
    is not a JSON object."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise FrozenbridgeError(f"{where}: not a JSON object ({err.msg})") from None
        if not isinstance(obj, dict):
            raise FrozenbridgeError(f"{where}: not a JSON object")
        rows.append((obj.get("file_name"), obj.get("text"), obj, where))
    return rows


def check_picture(path: Path, metadata: Path) -> Path:
    """`path` is a picture Pillow can decode, else one line naming it."""
    if not path.is_file():
        raise FrozenbridgeError(f"{metadata}: names {path.name!r} but {path} does not exist")
    try:
        with Image.open(path) as im:
            im.verify()
    except (UnidentifiedImageError, OSError, SyntaxError) as err:
        raise FrozenbridgeError(f"{path}: not a picture this can read ({err.__class__.__name__}); use PNG, JPEG or "
                                "another format Pillow opens") from None
    return path


def unlisted_pictures(directory: Path, listed: Iterable[Path]) -> int:
    """How many pictures under `directory` no row names."""
    named = {Path(p).resolve() for p in listed}
    return sum(1 for p in directory.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.resolve() not in named)
