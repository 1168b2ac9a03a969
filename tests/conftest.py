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


def pytest_collection_modifyitems(items):
    """The tiny project's chain (tests/test_pipeline.py, one module-scoped project: about half the suite's time)
    first. Workers take whole files (--dist loadfile, the project built once), in this order: so the other files
    run beside the chain instead of after it."""
    items.sort(key=lambda item: item.path.name != "test_pipeline.py")  # stable: every other test keeps its place


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
    from frozenbridge.testing.tiny_models import LM_FAMILIES, build_family_lm

    root = tmp_path_factory.mktemp("family_lms")
    for family in LM_FAMILIES:
        build_family_lm(root / family, family)
    return root
