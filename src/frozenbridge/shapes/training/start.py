"""What every training and evaluation stage sets up: device, precision, the frozen language model; the arguments
and inputs the two training stages share (shapes_stage1 and shapes_train)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import torch

from frozenbridge.bridge.data_parallel import init_from_env, launch
from frozenbridge.core.backbones import LanguageModel
from frozenbridge.core.device import pick_device, wants_cuda
from frozenbridge.core.frozen import frozen_language
from frozenbridge.core.params import check_replicate
from frozenbridge.core.stage import stage_parser
from frozenbridge.shapes.params import Params, load_params
from frozenbridge.shapes.paths import CHECKPOINTS, add_dirs
from frozenbridge.shapes.training.split_data import SplitData, load_split

log = logging.getLogger("frozenbridge")
PROCESSES = "shapes.train.processes"  # the key that asks for data-parallel processes, for error lines


def setup(params: Params) -> tuple[torch.device, bool, LanguageModel]:
    """Device (this process's, under torchrun), precision, the frozen language model."""
    device = init_from_env(wants_cuda(params.device), PROCESSES) or pick_device(params.device)
    lm, bf16 = frozen_language(params.language.name, device, params.shapes.train.precision)
    return device, bf16, lm


def training_parser(doc: str | None) -> argparse.ArgumentParser:
    """The arguments of stages/shapes/stage1.py and stages/shapes/train.py."""
    ap = add_dirs(stage_parser(doc))
    ap.add_argument("--replicate", type=int, required=True, help="replicate index (one of params.yaml replicates)")
    ap.add_argument("--checkpoints", type=Path, default=CHECKPOINTS,
                    help=f"where resumable state is kept while the run trains (default {CHECKPOINTS})")
    return ap


def start_training(args) -> tuple[Params, SplitData, torch.device, bool, LanguageModel]:
    """Params checked, training features loaded and checked, then the frozen model: in that order, so bad input
    fails before the slow part."""
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    # shapes.train.processes > 1: this script again, under torchrun; returns in each process
    launch(params.shapes.train.processes, params.device, PROCESSES)
    data = load_split("train", Path(args.data) / "pictures", Path(args.data) / "features", params.vision)
    device, bf16, lm = setup(params)
    return params, data, device, bf16, lm
