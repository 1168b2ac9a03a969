"""Learning-rate schedules, written once for every study that trains through the bridge: a linear warmup over a
fraction of the phase, then constant or a cosine decay to a tenth of the base rate."""

from __future__ import annotations

import math

SCHEDULES = ("constant", "cosine")


def lr_factor(step: int, steps: int, schedule: str, warmup: float) -> float:
    """The learning rate of step `step` (0-based) of a phase of `steps`, as a fraction of the base rate: a linear
    warmup over the first `warmup` of the phase, then constant or a cosine decay to a tenth."""
    warm = int(round(warmup * steps))
    if step < warm:
        return (step + 1) / (warm + 1)
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warm) / max(1, steps - warm))  # past the phase's end: stays at a tenth
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))
