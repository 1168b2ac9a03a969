"""The frozen language model on a stage's device, in the precision it asked for: the first thing every stage that
runs the language model sets up."""

from __future__ import annotations

import logging

import torch

from frozenbridge.core.backbones import LanguageModel, load_language
from frozenbridge.core.precision import bf16_choice, describe, prepare_frozen

log = logging.getLogger("frozenbridge")


def frozen_language(name: str, device: torch.device, precision: str = "auto") -> tuple[LanguageModel, bool]:
    """(the language model called `name`, frozen and moved to `device`; whether it runs in bf16), `precision` being
    a params value (auto, bf16, fp32)."""
    bf16, why = bf16_choice(precision, device)
    lm = load_language(name, dtype=torch.bfloat16 if bf16 else torch.float32)
    prepare_frozen(lm.model, device, bf16)
    log.info("device %s, %s for the frozen language model (%s)", device, describe(bf16), why)
    return lm, bf16
