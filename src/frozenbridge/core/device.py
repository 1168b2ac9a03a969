"""Which device a stage runs on: params.yaml `device`, else $FROZENBRIDGE_DEVICE, else CUDA when available."""

from __future__ import annotations

import os

import torch

from frozenbridge.core.config import valid_device_name
from frozenbridge.core.errors import FrozenbridgeError

DEVICE_ENV = "FROZENBRIDGE_DEVICE"


def pick_device(requested: str | None = None) -> torch.device:
    """The param (params.yaml `device`) unless it is `auto`, else $FROZENBRIDGE_DEVICE, else CUDA when available,
    else CPU."""
    source = "params.yaml: device"
    name = requested if requested and requested != "auto" else None
    if name is None and os.environ.get(DEVICE_ENV):
        source, name = DEVICE_ENV, os.environ[DEVICE_ENV]
    if name is None:
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "auto" or not valid_device_name(name):
        raise FrozenbridgeError(f"{source} = {name!r} is not allowed; expected auto, cpu, cuda or cuda:N")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise FrozenbridgeError(f"{source} = {name!r}: no CUDA device is available here; use cpu or auto")
        index = int(name[5:]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise FrozenbridgeError(f"{source} = {name!r}: this machine has {torch.cuda.device_count()} CUDA "
                                    "device(s); use cuda:0 or auto")
    return torch.device(name)
