"""The digits study over replicates: accuracy per number of prefix tokens (median, range, each replicate), the share
of the classifier's accuracy reached, what was written before and after training, and the plot rows; reads JSON only
(no torch)."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_results, spread
from frozenbridge.digits.paths import RUNS, adapter_dir

CHANCE = 0.1


def load_results(tokens: tuple[int, ...], replicates: tuple[int, ...], runs: Path = RUNS) -> dict:
    """{tokens: {replicate: result.json}}, one clear line for the first run missing."""
    return read_results({(t, r): adapter_dir(t, r, runs) / "result.json" for t in tokens for r in replicates},
                        "digits_train")


def summarize(results: dict, ceiling: float) -> dict:
    """Accuracy after the last epoch (median, range, each replicate), before training, and what was written."""
    out = {"ceiling": ceiling, "chance": CHANCE, "by_tokens": {}}
    for t, reps in results.items():
        final = [r["accuracy"] for r in reps.values()]
        last = [r["history"][-1] for r in reps.values()]
        out["by_tokens"][str(t)] = {
            "trainable": next(iter(reps.values()))["trainable"],
            "accuracy": spread(final), "replicates": {str(k): r["accuracy"] for k, r in reps.items()},
            "share_of_ceiling": round(statistics.median(final) / ceiling, 6),
            "before": {"accuracy": spread([r["before"]["accuracy"] for r in reps.values()]),
                       "well_formed": spread([r["before"]["well_formed"] for r in reps.values()]),
                       "distinct": spread([r["before"]["distinct"] for r in reps.values()]),
                       "example": next(iter(reps.values()))["before"]["most_common"]},
            "well_formed": spread([h["well_formed"] for h in last]),
            "distinct": spread([h["distinct"] for h in last]),
            "language_unchanged": all(r["language_unchanged"] for r in reps.values()),
        }
    return out


def curve_rows(results: dict) -> list[list]:
    """plots/digits/accuracy.csv rows: run, epoch, accuracy."""
    return [[f"{t} tok, rep {r}", h["epoch"], h["accuracy"]]
            for t, reps in results.items() for r, res in reps.items() for h in res["history"]]
