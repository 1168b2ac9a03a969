"""The retrieval study over replicates: recall per text tower, test set, caption length and direction (median and
range), chance, and the phrasing diagnostic; its plot rows. Reads JSON only (no torch)."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.summary import read_results, spread
from frozenbridge.retrieval.data.texts import LENGTHS
from frozenbridge.retrieval.paths import RUNS, run_dir
from frozenbridge.shapes.interface import TESTS

WAYS = ("image_to_text", "text_to_image")
KS = ("R@1", "R@5")
TOWER_LABELS = {"adaptor": "frozen LM + adaptor", "linear": "frozen LM + linear", "scratch": "from scratch",
                "vision_text": "vision model's text tower"}
TEST_LABELS = {"seen": "seen pairs", "heldout": "held-out pairs"}


def load_results(towers: tuple[str, ...], replicates: tuple[int, ...], runs: Path = RUNS) -> dict:
    """{tower: {replicate: result.json}}, one clear line for the first run missing."""
    return read_results({(tower, rep): run_dir(tower, rep, runs) / "result.json" for tower in towers
                         for rep in replicates}, "retrieval_train")


def summarize(results: dict) -> dict:
    """Every number the report and figure show, from the runs' results."""
    first = next(iter(next(iter(results.values())).values()))
    out = {"chance": first["chance"], "towers": {}, "phrasing_before": {}}
    for tower, reps in results.items():
        runs = list(reps.values())
        out["towers"][tower] = {
            "trainable": runs[0]["trainable"], "final_loss": spread(r["final_loss"] for r in runs),
            "recall": {test: {length: {way: {k: spread(r["recall"][test][length][way][k] for r in runs) for k in KS}
                                       for way in WAYS} for length in LENGTHS} for test in TESTS},
            "phrasing": {test: spread(r["phrasing"][test]["after"] for r in runs) for test in TESTS},
        }
        for r in runs:
            for test in TESTS:
                before = r["phrasing"][test]["before"]
                if before is not None:
                    key = "vision_text" if tower == "vision_text" else "lm"
                    out["phrasing_before"].setdefault(key, {})[test] = before
    return out


def recall_rows(summary: dict) -> list[list]:
    """plots/retrieval/recall.csv rows: tower, test, length, direction, group label, R@1 median, min, max, chance."""
    rows = []
    for tower, t in summary["towers"].items():
        for test in TESTS:
            for length in LENGTHS:
                for way in WAYS:
                    s = t["recall"][test][length][way]["R@1"]
                    rows.append([TOWER_LABELS[tower], test, length, way.replace("_", " "),
                                 f"{length}, {TEST_LABELS[test]}", s["median"], s["min"], s["max"],
                                 summary["chance"][test][length][way]["R@1"]])
    return rows


RECALL_HEADER = ["tower", "test", "length", "direction", "group", "median", "min", "max", "chance"]
