"""What every training and evaluation stage sets up: device, precision, the frozen language model, torch threads."""

from __future__ import annotations

import logging

import torch

from .backbones import LanguageModel, load_language
from .params import Params
from .precision import describe, pick_device, prepare_frozen, use_bf16

log = logging.getLogger("frozenbridge")


def setup(params: Params) -> tuple[torch.device, bool, LanguageModel]:
    device = pick_device(params.device)
    bf16 = use_bf16(params.train.precision, device)
    lm = load_language(params.language)
    prepare_frozen(lm.model, device, bf16)
    log.info("device %s, %s for the frozen language model", device, describe(bf16))
    return device, bf16, lm
