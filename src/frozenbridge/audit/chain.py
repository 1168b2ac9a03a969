"""The audit's chain, step by step: encode the folder once, train the run, answer and check. The DVC stages run one
step each (stages/audit/), `frozenbridge audit FOLDER --out DIR` runs them in turn into DIR; either way each step
reads what the one before wrote, and checks it was made from this folder.

    encode   FOLDER -> features/{train,test,blank}.parquet                 (the frozen encoder, once a picture)
    train    features -> runs/<r>/model/, run.json, history.csv          (stage 1 on captions, then questions;
                                                                      once a replicate of audit.replicates)
    check    runs + features -> audit.json, answers.jsonl, audit.md, audit.png
                                             (controls, kinds, held-out, failures, probe, curves, repeats)
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from frozenbridge.audit.data.features import encode, load_features
from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.run import SHAPES_SCORES, check
from frozenbridge.audit.params import Params
from frozenbridge.audit.paths import run_dir
from frozenbridge.audit.report.page import write_page
from frozenbridge.audit.training.run import train
from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.audit")


def run_audit(params: Params, folder_path: str | Path, out: Path, shapes_scores: Path = SHAPES_SCORES) -> dict:
    """The whole chain into `out` (features/, runs/, audit.json, answers.jsonl, audit.md, audit.png), a run for each
    of audit.replicates. Features already there and made from this folder by this encoder are kept; the runs are
    always trained afresh."""
    folder = read_audit_folder(folder_path)  # every problem of the folder, one line, before any work
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FrozenbridgeError(f"--out {out}: not a folder")
    features, runs = out / "features", out / "runs"
    try:
        load_features(features, folder, params)
        log.info("audit: %s holds this folder's features; not encoded again", features)
    except FrozenbridgeError:
        if features.exists():
            shutil.rmtree(features)
        encode(params, folder, features)
    if runs.exists():
        shutil.rmtree(runs)  # a run is cheap beside a wrong one: always trained afresh on these features
    for r in params.audit.replicates:
        train(params, folder, features, run_dir(runs, r), r)
    numbers = check(params, folder, features, runs, out / "audit.json", out / "answers.jsonl", out / "audit.png",
                    shapes_scores)
    write_page(numbers, out / "audit.md", "audit.png")
    return numbers
