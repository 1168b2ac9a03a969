"""Which device a stage runs on: params.yaml `device`, else $FROZENBRIDGE_DEVICE, else CUDA when available.

With several GPUs, `auto` spreads the processes that start at the same time (DVC queue workers, `dvc queue start
-j 4` on a 4-GPU box): each takes the GPU with the most free memory that no other frozenbridge process holds, and
holds it (an exclusive lock on a file in the temp directory, released when the process ends). When every GPU is
held, it shares the one with the most free memory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
        name = "cpu"
        if torch.cuda.is_available():
            count = torch.cuda.device_count()
            name = "cuda" if count == 1 else f"cuda:{claim_gpu([torch.cuda.mem_get_info(i)[0] for i in range(count)])}"
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


LOCK_DIR = Path(tempfile.gettempdir())
_held: dict[int, object] = {}  # GPU index -> its open lock file, kept for the life of the process


def _lock_path(index: int) -> Path:
    return LOCK_DIR / f"frozenbridge-gpu-{index}.lock"


def _try_lock(index: int):
    """The open, exclusively locked lock file of GPU `index`, or None when another process holds it."""
    import fcntl

    f = open(_lock_path(index), "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    return f


def claim_gpu(free: list[int]) -> int:
    """The index of the GPU to use given each GPU's free bytes: the freest one this process can lock (it keeps the
    lock), else, every GPU being held by another process, the freest one."""
    order = sorted(range(len(free)), key=lambda i: (-free[i], i))
    for index in order:
        if index in _held:
            return index
        lock = _try_lock(index)
        if lock is not None:
            _held[index] = lock
            return index
    return order[0]
