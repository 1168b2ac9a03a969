"""How long a run's training will take, said before the long part: its first steps are timed and the rest forecast.

The first step is left out (it warms caches, and with train.compile it compiles); the median of the next
`TIMED` steps is the step time. The forecast is that step time times the steps still to run: a run whose later
steps cost more or less (a LoRA phase, packed question batches) differs from it by that much.

A machine busy for a moment at the start would make that first look wrong for the whole run, so the clock looks
again at about a tenth of the loop (`SETTLE`): when the median of the steps since differs from the first look by
more than `DRIFT`, it says the settled pace too.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

WARMUP, TIMED = 1, 3
SETTLE, DRIFT = 0.1, 0.25


def duration(seconds: float) -> str:
    """A span as people say it: 40 s, 12 min, 3.1 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Pace:
    """A measured step time: the median of steps `first`..`last` (1-based, of this loop); `earlier` is the first
    look's step time when this is the second, settled look."""
    seconds: float
    first: int
    last: int
    earlier: float | None = None


class StepClock:
    """Times the steps of a loop: call `lap()` after each step. It returns the first look right after the
    (WARMUP + TIMED)-th step, a second look after `settle_at` steps when the pace since differs from the first by
    more than DRIFT, and None otherwise (always None for a loop too short to be worth forecasting)."""

    def __init__(self, steps: int):
        self.times: list[float] = []
        self.enabled = steps > WARMUP + TIMED
        self.settle_at = max(2 * (WARMUP + TIMED), round(SETTLE * steps))
        self.steps = steps
        self.first: float | None = None
        self.last = time.perf_counter()

    def lap(self) -> Pace | None:
        now = time.perf_counter()
        self.times.append(now - self.last)
        self.last = now
        n = len(self.times)
        if not self.enabled:
            return None
        if n == WARMUP + TIMED:
            self.first = statistics.median(self.times[WARMUP:])
            return Pace(self.first, WARMUP + 1, n)
        if n == self.settle_at and n < self.steps:
            later = statistics.median(self.times[WARMUP + TIMED:])
            if abs(later - self.first) > DRIFT * self.first:
                return Pace(later, WARMUP + TIMED + 1, n, self.first)
        return None


def forecast_line(name: str, device, precision: str, step_seconds: float | Pace, steps: int,
                  more: tuple[str, int] | None = None, least: int | None = None) -> str:
    """The line a run logs before its long part: device, precision, the measured step time, and what it comes to
    for the loop's `steps` (and, with `more` = (what, steps), for a larger whole such as every run of a study).
    With `least`, the loop may stop after that many steps, and the line gives both ends. A second, settled look
    (a Pace with `earlier`) says so, and `steps` are then the steps left."""
    pace = step_seconds if isinstance(step_seconds, Pace) else Pace(step_seconds, WARMUP + 1, WARMUP + TIMED)
    step_seconds = pace.seconds
    if pace.earlier is None:
        line = f"{name}: {device}, {precision}: {step_seconds:.2f} s a step (median of steps {pace.first}-{pace.last}), "
    else:
        line = (f"{name}: {device}, {precision}: the pace settled at {step_seconds:.2f} s a step (median of steps "
                f"{pace.first}-{pace.last}; the first look said {pace.earlier:.2f} s), ")
    left = "" if pace.earlier is None else " left"
    if least is not None and least < steps:
        line += (f"so its {least:,} to {steps:,} steps{left} take about {duration(step_seconds * least)} to "
                 f"{duration(step_seconds * steps)}")
    else:
        line += f"so its {steps:,} steps{left} take about {duration(step_seconds * steps)}"
    if more is not None:
        line += f"; {more[0]} ({more[1]:,} steps) about {duration(step_seconds * more[1])} at this step time"
    return line
