"""What every study's params share, written once: the top-level keys of params.yaml, the frozen backbones' sections,
the precisions, and the base class a study's view of the file extends.

params.yaml has the shared keys at the top (seed, device, replicates, vision, language) and one section per study
(shapes, digits, retrieval, onetoken, audit). A study's `Params` dataclass declares the shared keys it reads and its own
section (and, where it consumes another study's outputs, that study's section through its interface); every other
top-level key is let through unchecked, so each stage validates what it reads and nothing else. A key no study owns
is refused: a typo fails before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frozenbridge.core.config import (choice, device, distinct_integers, field, integer, optional, parse,
                                      read_params_file, text)
from frozenbridge.core.errors import FrozenbridgeError

SHARED_KEYS = ("seed", "device", "replicates", "vision", "language")
STUDY_SECTIONS = ("shapes", "digits", "retrieval", "onetoken", "audit")  # a new study adds its section's name here
TOP_LEVEL_KEYS = SHARED_KEYS + STUDY_SECTIONS

PRECISIONS = ("auto", "bf16", "fp32")  # auto: bf16 where the hardware has it (CPU bf16 instructions, CUDA), else fp32
FEATURE_KINDS = ("patches", "pooled")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")


@dataclass(frozen=True)
class VisionParams:
    """The frozen vision encoder of the shapes pictures (the shapes and retrieval studies)."""
    name: str = field("efficientnet-lite0",
                      text("'efficientnet-lite0', a Hugging Face model id or a local directory"))
    features: str = field("patches", choice(*FEATURE_KINDS))
    layer: int | None = field(10, optional(integer(-(2 ** 31)), "an integer block/layer index, or null for the "
                                                                 "encoder's final output"))
    dtype: str = field("float16", choice(*FEATURE_DTYPES))
    batch_size: int = field(32, integer())


@dataclass(frozen=True)
class LanguageParams:
    """The frozen language model (the shapes, retrieval and one-token studies)."""
    name: str = field("smollm2-135m", text("'smollm2-135m', a Hugging Face model id, a local directory, or a .gguf "
                                           "file (or a directory holding one)"))


class StudyParams:
    """Base of each study's Params dataclass: parse or load a whole params.yaml, checking the keys the study reads
    and letting every other top-level key pass."""

    @classmethod
    def parse(cls, raw: Any):
        return parse(cls, raw, "", also_allowed=TOP_LEVEL_KEYS)

    @classmethod
    def load(cls, path: str | Path = "params.yaml"):
        return cls.parse(read_params_file(path))


@dataclass(frozen=True)
class SharedParams(StudyParams):
    """The top-level keys every study reads; a study's Params extends this (or BackboneParams) with its section."""
    seed: int = field(0, integer(0))  # the base of every training seed (a study's data has its own)
    # auto ($FROZENBRIDGE_DEVICE if set, else CUDA, else Apple's GPU (MPS), else CPU), cpu, cuda, cuda:N or mps
    device: str = field("auto", device())
    # the paired replicates every study runs (a run's seed derives from `seed` and its replicate)
    replicates: tuple[int, ...] = field((0, 1, 2, 3, 4), distinct_integers("[0, 1, 2, 3, 4]"))


@dataclass(frozen=True)
class BackboneParams(SharedParams):
    """SharedParams and the frozen backbones' sections, for the studies that run them."""
    vision: VisionParams = field(VisionParams())
    language: LanguageParams = field(LanguageParams())


def check_replicate(params, replicate: int) -> int:
    """A stage's --replicate must be one of params.yaml's replicates."""
    if replicate not in params.replicates:
        raise FrozenbridgeError(f"--replicate {replicate} is not in params.yaml replicates {list(params.replicates)}")
    return replicate
