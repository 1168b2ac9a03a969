"""Interruption, numerical faults and reruns, through DVC on the tiny profile.

A `dvc repro` is SIGKILLed in the middle of a training stage: nothing it leaves looks complete, the next
`dvc repro` resumes the stage from its last checkpoint and finishes, and its metrics and `dvc.lock` hashes are
byte-identical to those of an uninterrupted run of the same params in another fresh project (same params, same
numbers). A NaN in the features stops training with the run name and step, exit code 2 and no output.
Every repro here targets `shapes_summarize`, the end of the chain that trains (the analyses and the other studies add
minutes and nothing to what is checked).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from tiny_project import dvc, make_project, project_env, run

STEPS = 300  # qa trains stage1_steps + stage2_steps = 303 steps: long enough to be killed mid-run
PROFILE = dict(replicates=[0], shapes={"recipes": ["qa"], "train": {"stage2_steps": STEPS, "checkpoint_every": 10}})
OUTPUTS = ["metrics/shapes/scores.json", "metrics/shapes/controls.json", "plots/shapes/scores.csv"]
TARGET = "shapes_summarize"


def fresh(tmp_path_factory, tiny_models, name: str) -> Path:
    project = make_project(tmp_path_factory.mktemp(name), tiny_models, **PROFILE)
    for out in OUTPUTS:  # the copies of the committed results: this project makes its own
        (project / out).unlink(missing_ok=True)
    return project


def lock_hashes(project: Path) -> dict[str, list]:
    lock = yaml.safe_load((project / "dvc.lock").read_text())["stages"]
    return {stage: sorted((o["path"], o.get("md5")) for o in body.get("outs", [])) for stage, body in lock.items()}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, tiny_models) -> Path:
    project = fresh(tmp_path_factory, tiny_models, "whole")
    dvc("repro", TARGET, cwd=project)
    return project


@pytest.fixture(scope="module")
def killed(tmp_path_factory, tiny_models) -> Path:
    """A project whose first `dvc repro` was SIGKILLed (with its stage) once shapes_train@qa-0 had checkpointed."""
    project = fresh(tmp_path_factory, tiny_models, "killed")
    proc = subprocess.Popen([sys.executable, "-m", "dvc", "repro", TARGET], cwd=project, env=project_env(project),
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = project / "checkpoints/shapes/qa/0/checkpoint.pt"
    deadline = time.monotonic() + 300
    while not checkpoint.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # dvc and the stage it runs, with no chance to clean up
    proc.wait()
    assert checkpoint.exists(), "shapes_train@qa-0 never checkpointed"
    return project


def test_killed_stage_leaves_nothing_that_looks_complete(killed):
    assert not (killed / "runs/shapes/qa/0/model/run.json").exists()
    assert not (killed / "runs/shapes/qa/0/scores.json").exists()
    assert not any((killed / out).exists() for out in OUTPUTS)
    status = dvc("status", "--json", cwd=killed).stdout
    assert "shapes_train@qa-0" in json.loads(status)


@pytest.fixture(scope="module")
def resumed(killed) -> str:
    """The log of the `dvc repro` after the kill (the checks on what the kill left run before it)."""
    proc = dvc("repro", TARGET, cwd=killed)
    return proc.stdout + proc.stderr


def test_next_repro_resumes_and_finishes(killed, resumed):
    log = resumed
    assert "resuming from" in log and "Running stage 'shapes_train@qa-0'" in log
    assert "Running stage 'shapes_stage1@0'" not in log, "a finished stage is not rerun"
    assert json.loads((killed / "runs/shapes/qa/0/model/run.json").read_text())["steps"] == 3 + STEPS
    assert not (killed / "checkpoints/shapes/qa/0").exists()
    assert "up to date" in dvc("repro", TARGET, cwd=killed).stdout


def test_same_params_give_byte_identical_metrics_and_lock_hashes(killed, resumed, uninterrupted):
    """Run twice (once interrupted and resumed, once straight through) in two fresh projects."""
    for out in ("metrics/shapes/scores.json", "metrics/shapes/controls.json", "metrics/shapes/data.json",
                "metrics/shapes/encode.json", "plots/shapes/scores.csv", "runs/shapes/qa/0/scores.json",
                "runs/shapes/qa/0/model/history.csv"):
        assert (killed / out).read_bytes() == (uninterrupted / out).read_bytes(), out
    assert lock_hashes(killed) == lock_hashes(uninterrupted)


def test_nan_loss_stops_with_run_and_step(uninterrupted, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(uninterrupted / "data/shapes", data)
    path = data / "features/train.parquet"
    table = pq.read_table(path)
    feats = table.column("features").combine_chunks().to_numpy_ndarray()
    poisoned = pa.FixedShapeTensorArray.from_numpy_ndarray(np.full_like(feats, np.nan))
    table = table.set_column(table.schema.get_field_index("features"), "features", poisoned)
    pq.write_table(table.replace_schema_metadata(pq.read_schema(path).metadata), path)
    out = tmp_path / "runs/stage1/0"
    proc = run([sys.executable, "stages/shapes/stage1.py", "--replicate", "0", "--data", str(data), "--out", str(out),
                "--checkpoints", str(tmp_path / "ckpt")], uninterrupted, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: stage1/0: loss is nan at step 1; stopped")
    assert not out.exists() and not list(tmp_path.glob("runs/stage1/.*"))
    assert "Traceback" not in proc.stderr
