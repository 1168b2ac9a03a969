"""The minutes a replicate took over every sitting that worked on it, so design.json's minutes are its whole time.

A sitting can stop mid-replicate: Ctrl-C, SIGTERM, or the machine taken away with no signal at all. Its stage 1
resumes from its checkpoint next time, so the time it spent is part of what the replicate cost, but the sitting that
keeps the replicate timed only itself. So each sitting writes its own minutes so far into a small file as it runs
(every `every` seconds, and once more when it stops on a signal); the sitting that keeps the replicate adds the
earlier sittings' minutes to its own and removes the file. Work a stopped sitting did past its last checkpoint is
done again and counted twice: that is what it cost. The file lives under .dvc/tmp/ (git-ignored, kept between
sittings in the same checkout).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable

from frozenbridge.core.atomic import write_json

FOLDER = Path(".dvc/tmp/comparison")


def sittings_file(root: Path, results: Path, name: str, replicate: int) -> Path:
    """Where a replicate's unfinished sittings are kept: one file per view folder, setting and replicate."""
    view = Path(results).as_posix().replace("/", "_")
    return Path(root) / FOLDER / f"{view}__{name}__{replicate}.json"


class Sittings:
    """`with Sittings(file) as s:` around one sitting's work on a replicate; `s.total()` is the minutes of the
    earlier sittings plus this one so far, `s.done()` forgets them once the replicate is kept."""

    def __init__(self, file: Path, every: float = 60.0, clock: Callable[[], float] = time.perf_counter):
        self.file, self.every, self.clock = Path(file), every, clock
        self.earlier: list[float] = []
        self.start = 0.0
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.finished = False

    def __enter__(self) -> "Sittings":
        if self.file.is_file():
            self.earlier = [float(m) for m in json.loads(self.file.read_text())["minutes"]]
        self.start = self.clock()
        self.write()
        self.thread = threading.Thread(target=self._keep_writing, daemon=True)
        self.thread.start()
        return self

    def now(self) -> float:
        """This sitting's minutes so far."""
        return (self.clock() - self.start) / 60

    def write(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.file, {"minutes": [*self.earlier, round(self.now(), 2)]})

    def _keep_writing(self) -> None:
        while not self.stop.wait(self.every):
            self.write()

    def total(self) -> tuple[float, int]:
        """(minutes of every sitting on this replicate, this one's so far included; how many sittings)."""
        return round(sum(self.earlier) + self.now(), 2), len(self.earlier) + 1

    def _quiet(self) -> None:
        """The writing thread stopped and gone, so no write of its lands after this."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def done(self) -> None:
        """The replicate is kept: its sittings are in its design.json, the file goes."""
        self._quiet()
        self.finished = True
        self.file.unlink(missing_ok=True)

    def __exit__(self, *exc) -> None:
        self._quiet()
        if not self.finished:
            self.write()  # stopped before the replicate was kept: the next sitting adds this one's minutes
