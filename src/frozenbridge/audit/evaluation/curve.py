"""Was the run still learning when it stopped? Read from its own loss curve (history.csv), so the page can tell "not
trained enough" from "does not read the picture": a public question folder audited at 150 question steps showed the
picture adding under a point, and at 600 steps 50 and 62 points on two of its kinds.

Per phase, the mean loss of its last fifth of steps against the fifth before: a fall of FALLING (5%) or more, and more
than NOISE standard errors of the two means' difference (a batch's loss varies with its questions, so a plateau's
windows differ by chance), is a loss still falling at the last step, and more steps of that phase (its setting named)
come before any reading of the gaps. A fifth is at least MIN_WINDOW steps; a phase too short for two such windows is
not judged.
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

FALLING = 0.05  # a relative fall of the loss between the last two fifths of a phase that counts as still learning
NOISE = 2.0  # and the fall is more than this many standard errors of the difference of the two windows' means
MIN_WINDOW = 5
SETTINGS = {"stage1": "audit.train.stage1_steps", "stage2": "audit.train.stage2_steps"}


def read_history(path: Path) -> dict[str, list[float]]:
    """{phase: its losses in step order} from a run's history.csv (step, phase, loss)."""
    out: dict[str, list[float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["phase"], []).append(float(row["loss"]))
    return out


def phase_curve(losses: list[float]) -> dict | None:
    """The last fifth's mean loss against the fifth before's, and whether it still fell by FALLING or more and beyond
    NOISE standard errors; None for a phase too short to judge."""
    window = max(MIN_WINDOW, len(losses) // 5)
    if len(losses) < 2 * window:
        return None
    first, second = losses[-2 * window:-window], losses[-window:]
    before, last = statistics.fmean(first), statistics.fmean(second)
    error = math.sqrt((statistics.variance(first) + statistics.variance(second)) / window)
    fall = (before - last) / before if before > 0 else 0.0
    return {"steps": len(losses), "window": window, "before": round(before, 5), "last": round(last, 5),
            "fall": round(fall, 4), "error": round(error, 5),
            "still_falling": fall >= FALLING and before - last > NOISE * error, "setting": None}


def learning_curve(history: Path) -> dict:
    """{phase: phase_curve, with the setting that raises its steps} for each phase of the run's history."""
    out = {}
    for phase, losses in read_history(history).items():
        curve = phase_curve(losses)
        out[phase] = None if curve is None else {**curve, "setting": SETTINGS.get(phase)}
    return out
