"""The audit's chain, step by step: encode the folder once, train the run, answer and check. The DVC stages run one
step each (stages/audit/), `frozenbridge audit FOLDER --out DIR` runs them in turn into DIR; either way each step
reads what the one before wrote, and checks it was made from this folder.

    encode   FOLDER -> features/{train,test,blank}.parquet                 (the frozen encoder, once a picture)
    train    features -> run/model/, run/run.json, run/history.csv        (stage 1 on captions, then questions)
    check    run + features -> audit.json, answers.jsonl, audit.md, audit.png
                                                     (controls, kinds, held-out, failures, probe)
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from frozenbridge.audit.data.features import encode, load_features
from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.run import SHAPES_SCORES, check
from frozenbridge.audit.params import Params
from frozenbridge.audit.report.page import write_page
from frozenbridge.audit.training.run import train
from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.audit")


def run_audit(params: Params, folder_path: str | Path, out: Path, shapes_scores: Path = SHAPES_SCORES) -> dict:
    """The whole chain into `out` (features/, run/, audit.json, answers.jsonl, audit.md, audit.png). Features
    already there and made from this folder by this encoder are kept; the run is always trained afresh."""
    folder = read_audit_folder(folder_path)  # every problem of the folder, one line, before any work
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FrozenbridgeError(f"--out {out}: not a folder")
    features, run = out / "features", out / "run"
    try:
        load_features(features, folder, params)
        log.info("audit: %s holds this folder's features; not encoded again", features)
    except FrozenbridgeError:
        if features.exists():
            shutil.rmtree(features)
        encode(params, folder, features)
    if run.exists():
        shutil.rmtree(run)  # a run is cheap beside a wrong one: always trained afresh on these features
    train(params, folder, features, run)
    numbers = check(params, folder, features, run, out / "audit.json", out / "answers.jsonl", out / "audit.png",
                    shapes_scores)
    write_page(numbers, out / "audit.md", "audit.png")
    return numbers
