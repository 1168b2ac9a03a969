"""The one-token study scored over its replicates: agreement of the untrained connector's captions (the floor), the
trained ones, and the folder's own captions (the ceiling), the share of that gap each replicate closes; exact
matches and distinct captions (a connector that collapses writes one sentence for every picture); and the alignment
check of the scoring space itself."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from frozenbridge.core.summary import read_results, spread
from frozenbridge.onetoken.data.features import PictureFeatures
from frozenbridge.onetoken.evaluation.scorers import NotAvailable, Scorer, retrieval_scorer, vision_text_scorer
from frozenbridge.onetoken.paths import RUNS, run_dir
from frozenbridge.retrieval import interface as retrieval

log = logging.getLogger("frozenbridge.onetoken")
KINDS = ("floor", "trained")


def load_results(replicates: tuple[int, ...], runs: Path = RUNS) -> dict[int, dict]:
    """{replicate: result.json}, one clear line for the first run missing."""
    return read_results({(rep,): run_dir(rep, runs) / "result.json" for rep in replicates}, "onetoken_train")


def pick_scorer(params, params_file: Path, test: PictureFeatures, n: int, device: torch.device) -> Scorer:
    """The encoder's own text tower, else the retrieval study's; NotAvailable (with the reason) otherwise."""
    name = params.onetoken.encoder.name
    if retrieval.has_text_tower(name, "onetoken.encoder.name"):
        return vision_text_scorer(name, test, n, device, params.onetoken.encoder.batch_size)
    try:
        return retrieval_scorer(params, params_file, test, n, device)
    except NotAvailable as why:
        raise NotAvailable(f"agreement is not available for onetoken.encoder.name = {name!r}: it has no text tower "
                           f"of its own, and {why}; name a CLIP or SigLIP model to score any folder") from None


def share(floor: float, trained: float, ceiling: float) -> float | None:
    """The fraction of the floor-to-ceiling gap the trained captions close (None when there is no gap)."""
    return None if abs(ceiling - floor) < 1e-9 else round((trained - floor) / (ceiling - floor), 4)


def score(results: dict[int, dict], test: PictureFeatures, scorer: Scorer | None, why: str | None) -> dict:
    """Every number the report and figures show; with no scorer, the caption numbers and `why` alone."""
    n = len(next(iter(results.values()))["captions"])
    truth = [list(c) for c in test.captions[:n]]
    out = {"pictures": n, "scorer": scorer.name if scorer else None, "available": scorer is not None, "why": why,
           "replicates": {}}
    ceiling = float(np.mean(scorer.agreement(truth))) if scorer else None
    for rep, r in results.items():
        row = {"trainable": r["trainable"], "loss_end": r["loss_end"]}
        for kind in KINDS:
            s = r["scores"][kind]
            row[kind] = {"exact": s["exact"], "distinct": s["distinct"], "by_set": s["by_set"]}
            if scorer:
                row[kind]["agreement"] = round(float(np.mean(scorer.agreement([[c[kind]] for c in r["captions"]]))),
                                               4)
        if scorer:
            row["share_of_gap"] = share(row["floor"]["agreement"], row["trained"]["agreement"], ceiling)
        out["replicates"][str(rep)] = row
    reps = list(out["replicates"].values())
    out["median"] = {kind: {"exact": spread(r[kind]["exact"] for r in reps),
                            "distinct": spread(r[kind]["distinct"] for r in reps)} for kind in KINDS}
    if scorer:
        out["ceiling"] = round(ceiling, 4)
        for kind in KINDS:
            out["median"][kind]["agreement"] = spread(r[kind]["agreement"] for r in reps)
        gaps = [r["share_of_gap"] for r in reps if r["share_of_gap"] is not None]
        out["median"]["share_of_gap"] = spread(gaps) if gaps else None
    return out


def agreement_rows(summary: dict) -> list[list]:
    """plots/onetoken/agreement.csv: caption kind, replicate, agreement (the human captions once, as the ceiling)."""
    if not summary["available"]:
        return []
    rows = [[f"{kind}, replicate {rep}", kind, rep, r[kind]["agreement"]]
            for rep, r in summary["replicates"].items() for kind in KINDS]
    return rows + [["the folder's captions", "ceiling", "", summary["ceiling"]]]


AGREEMENT_HEADER = ["captions", "kind", "replicate", "agreement"]
