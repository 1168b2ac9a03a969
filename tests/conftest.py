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
MACHINE_CXX = os.environ.get("CXX")
os.environ["CXX"] = "frozenbridge-tests-have-no-c++-compiler"

ROOT = Path(__file__).resolve().parents[1]


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
