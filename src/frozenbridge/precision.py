"""Device and autocast choice: bf16 for the frozen language model where the hardware has it, fp32 otherwise.

The connector's weights and the optimizer always stay fp32; only the frozen model's matmuls run in bf16.
"""

from __future__ import annotations

import contextlib
import os

import torch

from .errors import FrozenbridgeError

DEVICE_ENV = "FROZENBRIDGE_DEVICE"


def pick_device(requested: str | None = None) -> torch.device:
    """$FROZENBRIDGE_DEVICE, else CUDA when available, else CPU."""
    name = requested or os.environ.get(DEVICE_ENV) or ("cuda" if torch.cuda.is_available() else "cpu")
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise FrozenbridgeError(f"{DEVICE_ENV} = {name!r} is not allowed; expected cpu, cuda or cuda:N")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise FrozenbridgeError(f"{DEVICE_ENV} = {name!r}: no CUDA device is available here; use cpu")
    return torch.device(name)


def cpu_has_bf16() -> bool:
    check = getattr(torch.cpu, "_is_avx512_bf16_supported", None) or getattr(torch.cpu, "_is_amx_tile_supported", None)
    try:
        return bool(check and check())
    except RuntimeError:  # pragma: no cover - depends on the CPU
        return False


def use_bf16(precision: str, device: torch.device) -> bool:
    if precision == "fp32":
        return False
    if precision == "bf16":
        return True
    return torch.cuda.is_bf16_supported() if device.type == "cuda" else cpu_has_bf16()


def autocast(device: torch.device, bf16: bool):
    return torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
