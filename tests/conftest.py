"""Shared fixtures. Every test runs offline: no test may reach a network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


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
