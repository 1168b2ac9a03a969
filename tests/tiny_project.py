"""The tiny project the pipeline tests run: the repo's dvc.yaml, params.yaml, stages and sources copied into a fresh git
repo, on a tiny profile (tiny local backbones, a handful of pictures, a few steps), and the commands run in it.

Its first `dvc repro` is built once a session (`built_project`) and copied into each module that uses it, so the
modules run on either pytest-xdist worker at the cost of one build: tests/test_pipeline.py reads what the build
wrote and reruns parts of it; tests/test_pipeline_connectors.py, test_pipeline_experiments.py and
test_pipeline_queue.py run experiments on it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ["caption", "qa", "caption_qa", "caption_qa_lora", "caption_qa_mix"]
PROJECT_FILES = ["dvc.yaml", "params.yaml", ".dvcignore", ".gitignore", ".dvc/config", ".dvc/.gitignore",
                 ".dvc/plots/scores.json", ".dvc/plots/loss.json", ".dvc/plots/recall.json",
                 ".dvc/plots/accuracy.json", "stages", "src", "metrics",
                 "plots"]


TIMEOUT_S = 1800  # the slowest call, the tiny project's first `dvc repro`, takes about 6 minutes on a slow machine


IMPORT_HOOK = ROOT / "tests" / "import_hook"  # records the package files each process loads (sitecustomize)


def import_log(cwd: Path) -> Path:
    return cwd.parent / "import-log"


def project_env(cwd: Path) -> dict[str, str]:
    """The environment a command in the test project runs with: this venv first on PATH, the project's sources, and
    the import hook writing each process's loaded package files beside the project."""
    import_log(cwd).mkdir(exist_ok=True)
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": f"{cwd / 'src'}{os.pathsep}{IMPORT_HOOK}", "HF_HUB_OFFLINE": "1",
            "FROZENBRIDGE_IMPORT_LOG": str(import_log(cwd))}


def run(cmd: list[str], cwd: Path, check: bool = True, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run `cmd` in `cwd`, output captured; a call that outlives `timeout` fails the test instead of hanging it."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=project_env(cwd), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{' '.join(cmd)} still running after {timeout:.0f} s:\n{exc.stdout}\n"
                             f"{exc.stderr}") from exc
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def dvc(*args: str, cwd: Path, check: bool = True, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "dvc", *args], cwd, check, timeout)


def set_params(project: Path, **sections) -> None:
    """Top-level keys set; a mapping is merged into the section there, two levels deep (shapes={"train": {...}})."""
    path = project / "params.yaml"
    raw = yaml.safe_load(path.read_text())
    for key, value in sections.items():
        if isinstance(value, dict):
            raw[key] = {**raw[key], **{k: {**raw[key][k], **v}
                                       if isinstance(v, dict) and isinstance(raw[key].get(k), dict) else v
                                       for k, v in value.items()}}
        else:
            raw[key] = value
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def tiny_gguf(tiny_models) -> Path:
    """The tiny Qwen2 as one F32 GGUF file beside it (written once a session): the project's language.name."""
    from frozenbridge.testing.tiny_gguf import write_gguf

    path = tiny_models["qwen2"].parent / "tiny-qwen2-F32.gguf"
    return path if path.is_file() else write_gguf(tiny_models["qwen2"], path)


def tiny_profile(tiny_models) -> dict:
    """Tiny local backbones (the language model as a GGUF file), a handful of pictures, a few steps: the whole chain
    in about a minute. Two replicates, not the default five: a pair is what the paired analysis needs."""
    return dict(
        replicates=[0, 1],
        vision={"name": str(tiny_models["siglip"]), "layer": None, "batch_size": 5},
        language={"name": str(tiny_gguf(tiny_models))},
        shapes={"recipes": RECIPES,
                "data": {"image_size": 64, "sizes": {"train": 12, "test_seen": 4, "test_heldout": 4}},
                "train": {"batch_size": 4, "stage1_steps": 3, "stage2_steps": 2, "mix_captions": 2,
                          "precision": "fp32", "stage1_until": {"items": 3, "every": 1, "max_steps": 4}},
                "evaluate": {"items": 3, "batch_size": 8, "caption_tokens": 12, "answer_tokens": 3}},
        digits={"data": {"train": 300, "test": 60, "seed": 0},
                "classifier": {"hidden": [32, 16], "epochs": 2, "batch_size": 64, "lr": 0.002},
                "language": {"width": 16, "layers": 1, "heads": 2, "prefix": 2, "steps": 20, "batch_size": 16,
                             "lr": 0.003},
                "adapter": {"tokens": [2, 1], "epochs": 2, "batch_size": 64, "lr": 0.003, "init": "learned_null"}},
        retrieval={"text": {"pool": "mean", "batch_size": 16, "precision": "fp32"},
                   "towers": ["adaptor", "scratch", "vision_text"],
                   "dim": 8, "adaptor": {"hidden": 16}, "scratch": {"width": 16, "layers": 1, "heads": 2},
                   "train": {"epochs": 2, "batch_size": 8, "lr": 0.003, "weight_decay": 0.0, "temperature": 0.07}},
        onetoken={"folder": "data/onetoken/shapes", "test_fraction": 0.2, "encoder": {"name": "efficientnet-lite0",
                                                                                       "batch_size": 8},
                  "prefix_tokens": 1, "hidden": 32, "prompt": "This is a picture of:",
                  "train": {"steps": 3, "batch_size": 4, "lr": 0.003, "schedule": "cosine", "warmup": 0.0,
                            "precision": "fp32"},
                  "evaluate": {"batch_size": 8, "caption_tokens": 6, "pictures": 6},
                  "agreement": {"tower": "adaptor", "shown": 4}},
        audit={"image_size": 64, "replicates": [0, 1], "train": {"batch_size": 4, "stage1_steps": 3, "stage2_steps": 2, "precision": "fp32"},
               "evaluate": {"batch_size": 8, "bootstrap": 20}},
    )


def make_project(dest: Path, tiny_models, **overrides) -> Path:
    """A copy of the project in a fresh git repo, on the tiny profile (tiny local backbones, a handful of
    pictures) with `overrides` applied on top."""
    for name in PROJECT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif src.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    set_params(dest, **tiny_profile(tiny_models))
    set_params(dest, **overrides)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tiny profile"]):
        run(cmd, dest)
    return dest


BUILD = "tiny-project-build"  # the folder, shared by every worker of the session, where the first repro is built


def _build(root: Path, tiny_models) -> None:
    """The tiny project at root/project after its first `dvc repro`, committed; that repro's output in repro.txt,
    and done.txt last (failed.txt with the error instead when the repro fails). What a worker killed while building
    left is cleared first."""
    for left in (root / "project", root / "import-log"):
        shutil.rmtree(left, ignore_errors=True)
    (root / "project").mkdir()
    project = make_project(root / "project", tiny_models)
    repro = dvc("repro", cwd=project, check=False)
    if repro.returncode != 0:
        (root / "failed.txt").write_text(f"dvc repro failed ({repro.returncode}):\n{repro.stdout}\n{repro.stderr}")
        return
    run(["git", "add", "-A"], project)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first repro"], project)
    (root / "repro.txt").write_text(repro.stdout)
    (root / "done.txt").write_text("")


def built_project(tmp_path_factory, tiny_models, worker_id: str) -> tuple[Path, str]:
    """A copy of the tiny project after its first `dvc repro` (committed), in a new folder of this module's, with
    the import log of that repro beside it; and the repro's output. The first worker to ask builds it while holding
    a file lock, the others wait on the lock and copy: one build a session, whichever worker runs which module."""
    base = tmp_path_factory.getbasetemp()
    root = (base if worker_id == "master" else base.parent) / BUILD  # the session's folder every worker shares
    root.mkdir(exist_ok=True)
    with open(root.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (root / "done.txt").exists() and not (root / "failed.txt").exists():
                _build(root, tiny_models)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if (root / "failed.txt").exists():
        raise AssertionError((root / "failed.txt").read_text())
    dest = tmp_path_factory.mktemp("pipeline") / "copy"
    shutil.copytree(root, dest, symlinks=True)
    return dest / "project", (root / "repro.txt").read_text()

