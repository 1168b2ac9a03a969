"""How long a run's training will take, said before the long part: its first steps are timed and the rest forecast.

The first step is left out (it warms caches, and with train.compile it compiles); the median of the next
`TIMED` steps is the step time. The forecast is that step time times the steps still to run: a run whose later
steps cost more or less (a LoRA phase, packed question batches) differs from it by that much.
"""

from __future__ import annotations

import statistics
import time

WARMUP, TIMED = 1, 3


def duration(seconds: float) -> str:
    """A span as people say it: 40 s, 12 min, 3.1 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class StepClock:
    """Times the steps of a loop: call `lap()` after each step. It returns the step time once, right after the
    (WARMUP + TIMED)-th step, and None otherwise (always None for a loop too short to be worth forecasting)."""

    def __init__(self, steps: int):
        self.times: list[float] = []
        self.enabled = steps > WARMUP + TIMED
        self.last = time.perf_counter()

    def lap(self) -> float | None:
        now = time.perf_counter()
        self.times.append(now - self.last)
        self.last = now
        if self.enabled and len(self.times) == WARMUP + TIMED:
            return statistics.median(self.times[WARMUP:])
        return None


def forecast_line(name: str, device, precision: str, step_seconds: float, steps: int,
                  more: tuple[str, int] | None = None, least: int | None = None) -> str:
    """The one line a run logs before its long part: device, precision, the measured step time, and what it comes
    to for the loop's `steps` (and, with `more` = (what, steps), for a larger whole such as every run of a study).
    With `least`, the loop may stop after that many steps, and the line gives both ends."""
    line = f"{name}: {device}, {precision}: {step_seconds:.2f} s a step "
    line += f"(median of steps {WARMUP + 1}-{WARMUP + TIMED}), "
    if least is not None and least < steps:
        line += (f"so its {least:,} to {steps:,} steps take about {duration(step_seconds * least)} to "
                 f"{duration(step_seconds * steps)}")
    else:
        line += f"so its {steps:,} steps take about {duration(step_seconds * steps)}"
    if more is not None:
        line += f"; {more[0]} ({more[1]:,} steps) about {duration(step_seconds * more[1])} at this step time"
    return line
