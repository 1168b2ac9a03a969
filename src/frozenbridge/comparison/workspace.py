"""The workspace around one `dvc exp run` of a tool: whether it may start (no stage changed since dvc.lock, the
machine trains as the default run did) and how it is put back afterwards, also when the tool is stopped.

The connector comparison (comparison/run.py) runs its designs through these: its experiments rewrite params.yaml,
dvc.lock, metrics/ and plots/ while they run, and each design is paired with the default run's committed MLP.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


class Terminated(Exception):
    """The tool got SIGTERM: raised in its main thread so that the workspace is restored before it stops."""


def _terminated(signum, frame) -> None:
    raise Terminated("stopped by SIGTERM")


@contextmanager
def restored(root: Path):
    """Puts the workspace back as HEAD has it when the block ends, failed or interrupted (Ctrl-C, SIGTERM): params.yaml,
    dvc.lock, metrics/ and plots/ from git, the other outputs from DVC's cache, and the branch checked out again
    (an interrupted `dvc exp run` leaves HEAD detached)."""
    branch = subprocess.run(["git", "-C", str(root), "symbolic-ref", "-q", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM does not cut the restore short
        try:
            git(root, "checkout", "HEAD", "--", "params.yaml", "dvc.lock", "metrics", "plots")
            if branch:
                git(root, "checkout", "-q", branch)
            subprocess.run(["dvc", "checkout", "-q", "-f", "--allow-missing"], cwd=root, check=True)
        finally:
            signal.signal(signal.SIGTERM, previous)


RESTORED = re.compile(r"Stage '([^']+)' is cached - skipping run")  # DVC's line for a run-cache restore


def run_experiment(argv: list[str], root: Path) -> list[str]:
    """`dvc exp run` in its own process group, so that when this tool is stopped the stage it runs gets SIGTERM too
    (and writes nothing after the restore); SIGKILL if dvc is still there 30 s later. Its output is passed on as it
    comes; returns the stages DVC restored from its run cache instead of running them (a run of the same stage,
    deps and params made before, say by a sitting stopped before it kept its replicate): their time is not in
    this run's."""
    proc = subprocess.Popen(argv, cwd=root, start_new_session=True, stdout=subprocess.PIPE, text=True, bufsize=1)
    restored_stages = []
    try:
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            restored_stages += RESTORED.findall(line)
        if proc.wait():
            raise subprocess.CalledProcessError(proc.returncode, argv)
    except BaseException:
        for sent in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sent)
                proc.wait(timeout=30)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        raise
    return restored_stages


def precision_mismatch(root: Path) -> str | None:
    """Why this machine's designs could not be paired with the default run's MLP, or None: shapes training here would
    run on another device, or on CPU at another precision (bf16 or fp32), than the default run did, as its timing
    (bench/repro.json: the device, the CPU's bf16 instructions) records it. Their differences would mix the design
    with the arithmetic. With no timing there is nothing to compare: None."""
    from frozenbridge.core.config import read_yaml
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.precision import bf16_choice
    from frozenbridge.core.summary import read_json_if_present
    from frozenbridge.tools.where_it_runs import has_bf16

    timed = read_json_if_present(root / "bench/repro.json")
    if not timed:
        return None
    raw, ran = read_yaml((root / "params.yaml").read_text()), timed["machine"]
    device, advice = pick_device(raw["device"]), ("compare on a machine like the default run's, or `dvc repro` and "
                                                  "time the default run here (tools.repro_timing) and commit it first")
    if device.type != ran["device"]:
        return (f"here the designs would train on {device.type}, but the default run's MLP, which each design is "
                f"paired with, ran on {ran['device']} (bench/repro.json); {advice}")
    if device.type != "cpu":
        return None
    precision = raw["shapes"]["train"]["precision"]
    there = precision == "bf16" or (precision == "auto" and has_bf16(ran))
    here, why = bf16_choice(precision, device)
    if here == there:
        return None
    words = {True: "bf16", False: "fp32"}
    return (f"here the designs would train in {words[here]} ({why}), but the default run's MLP, which each design is "
            f"paired with, ran in {words[there]} (bench/repro.json: bf16 through {ran['bf16_path']}); the "
            f"differences would mix design and precision: {advice}")


MISSING = ("deleted", "not in cache")  # `dvc status` words for an output or dependency that is only absent


def _absent(root: Path, name: str, state: object) -> bool:
    """`dvc status` says `state` of file or folder `name`, and there is nothing there: it is missing, or it is a
    folder with no file under it ("modified": `dvc checkout --allow-missing` leaves the folders above the outputs it
    could not check out)."""
    path = root / name
    return state in MISSING or (state == "modified" and path.is_dir()
                                and not any(p.is_file() for p in path.rglob("*")))


def _only_missing(root: Path, change: object) -> bool:
    """One entry of a stage's `dvc status` ({"changed deps": {file: state}}, or a line such as "changed command"):
    whether every file it names is only absent."""
    return isinstance(change, dict) and all(
        isinstance(files, dict) and all(_absent(root, name, state) for name, state in files.items())
        for files in change.values())


def changed_stages(root: Path) -> list[str]:
    """The stages `dvc status` finds changed for any other reason than outputs (or the upstream outputs they read)
    missing from the workspace and cache: edited code or data, changed params, a new command."""
    report = json.loads(subprocess.run(["dvc", "status", "--json"], cwd=root, check=True, capture_output=True,
                                       text=True).stdout or "{}")
    return [stage for stage, changes in report.items() if not all(_only_missing(root, c) for c in changes)]


def local_mlp_name() -> str:
    """The name of the MLP setting a machine unlike the default run's trains for its designs to pair with: its
    device and precision, as `precision: auto` decides here (mlp@cpu-fp32, mlp@cpu-bf16, mlp@cuda-bf16)."""
    from frozenbridge.core.config import read_yaml
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.precision import use_bf16

    raw = read_yaml(Path("params.yaml").read_text()) if Path("params.yaml").is_file() else {}
    device = pick_device(raw.get("device", "auto"))
    precision = (raw.get("shapes", {}).get("train", {}) or {}).get("precision", "auto")
    return f"mlp@{device.type}-{'bf16' if use_bf16(precision, device) else 'fp32'}"
