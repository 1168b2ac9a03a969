"""Shared fixtures. Every test runs offline: no test may reach a network."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests (and the pipelines they start) run as on a machine with no C++ compiler, where train.compile: auto trains
# eager: otherwise every test process that trains questions would pay a compile. Tests that take the `compiles`
# fixture (below) get the machine's compiler back.
if "FROZENBRIDGE_MACHINE_CXX" not in os.environ:  # the first process; pytest-xdist's workers inherit both variables
    os.environ["FROZENBRIDGE_MACHINE_CXX"] = os.environ.get("CXX", "")
MACHINE_CXX = os.environ["FROZENBRIDGE_MACHINE_CXX"] or None
os.environ["CXX"] = "frozenbridge-tests-have-no-c++-compiler"

# pyproject's addopts run the suite on two pytest-xdist workers. Each worker, and every stage it starts, gets its
# share of the cores: two workers of all-core OpenMP pools on the same cores spin-wait on each other (a compiled step
# runs several times slower). Set before any test imports torch, which reads it once.
if workers := os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(workers))))

ROOT = Path(__file__).resolve().parents[1]


FIRST = "test_pipeline.py"  # the module that reads the tiny project's first repro (tests/tiny_project.py)
# experiments on that build, the longest first: whichever worker is free takes the next, so the last is the shortest
AFTER_BUILD = ("test_pipeline_connectors.py", "test_pipeline_experiments.py", "test_pipeline_queue.py")
AT = 0.85  # where among the other files the experiments go: just after the build is done (see below)


def pytest_collection_modifyitems(items):
    """The order the workers take whole files in (--dist loadfile). The tiny project's first repro is built once a
    session, by the first module that asks, while any other waits on its lock: tests/test_pipeline.py comes first, so
    one worker builds it while the other runs the other files beside it. The modules of experiments on the build come
    most of the way through the other files, where the other worker gets to them just after the build is done (the
    build takes a little less than the other files on one worker): earlier, it would sit waiting for the build; at the
    very end, the last worker would run the longest of them alone after everything else."""
    files = list(dict.fromkeys(item.path.name for item in items))
    others = [f for f in files if f != FIRST and f not in AFTER_BUILD]
    cut = round(AT * len(others))
    order = [FIRST, *others[:cut], *AFTER_BUILD, *others[cut:]]
    rank = {name: i for i, name in enumerate(order)}
    items.sort(key=lambda item: rank[item.path.name])


@pytest.fixture()
def compiles(monkeypatch):
    """The machine's own C++ compiler for this test (inductor finds it; train.compile: auto compiles)."""
    import torch._inductor.config as inductor  # it read $CXX when first imported

    if MACHINE_CXX is None:
        monkeypatch.delenv("CXX")
    else:
        monkeypatch.setenv("CXX", MACHINE_CXX)
    with inductor.patch({"cpp.cxx": (None, MACHINE_CXX or ("clang++" if sys.platform == "darwin" else "g++"))}):
        yield


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """Tiny random-weight CLIP, SigLIP and Qwen2 (+ tokenizer) saved with save_pretrained."""
    from frozenbridge.testing.tiny_models import build_all

    return build_all(tmp_path_factory.mktemp("tiny-models"))


@pytest.fixture(scope="session")
def family_lms(tmp_path_factory) -> Path:
    """A folder of tiny random-weight language models, one per family of LM_FAMILIES, named by the family."""
    from frozenbridge.testing.tiny_language import LM_FAMILIES, build_family_lm

    root = tmp_path_factory.mktemp("family_lms")
    for family in LM_FAMILIES:
        build_family_lm(root / family, family)
    return root


# The tiny project's first repro (tests/tiny_project.py), for the modules that read it or run experiments on it:
# each module gets its own copy of the one build of the session.
@pytest.fixture(scope="module")
def built(tmp_path_factory, tiny_models, worker_id) -> tuple[Path, str]:
    """This module's copy of the built tiny project, and its first repro's output."""
    from tiny_project import built_project

    return built_project(tmp_path_factory, tiny_models, worker_id)


@pytest.fixture(scope="module")
def project(built) -> Path:
    return built[0]


@pytest.fixture(scope="module")
def baseline(project) -> Path:
    """A DVC remote (a local folder) beside the project, its default: `dvc push` fills it."""
    from tiny_project import dvc

    remote = project.parent / "dvc-remote"
    dvc("remote", "add", "--local", "-d", "shared", str(remote), cwd=project)
    return remote
