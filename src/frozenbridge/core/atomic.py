"""Write outputs to a temporary path and rename on success, so nothing half-written ever looks complete."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of `path` (file or directory); on success it replaces `path`, on error it is
    removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # keep the suffix: writers infer formats from it
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    _remove(tmp)
    _remove_orphans(path)
    try:
        yield tmp
    except BaseException:
        _remove(tmp)
        raise
    if path.is_dir():
        _remove(path)  # a file is replaced in one step below; a directory has to go first
    os.replace(tmp, path)


def _remove_orphans(path: Path) -> None:
    """Temporaries left by a writer that was killed (SIGKILL skips cleanup): their process is gone."""
    prefix = f".{path.stem}.tmp-"
    for stale in path.parent.glob(f"{prefix}*{path.suffix}"):
        pid = stale.name[len(prefix):].removesuffix(path.suffix)
        if pid.isdigit() and not _alive(int(pid)):
            _remove(stale)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()


def write_json(path: str | Path, obj: object) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_csv(path: str | Path, header: list[str], rows) -> None:
    """A CSV file with a header row, written atomically."""
    import csv

    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
