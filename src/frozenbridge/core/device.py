"""Which device a stage runs on: params.yaml `device`, else $FROZENBRIDGE_DEVICE, else CUDA when available, else
Apple's GPU (MPS) when available, else the CPU.

With several GPUs, `auto` spreads the processes that start at the same time (DVC queue workers, `dvc queue start
-j 4` on a 4-GPU box): each takes the GPU with the most free memory that no other frozenbridge process holds, and
holds it (an exclusive lock on a file in the temp directory, released when the process ends). When every GPU is
held, it shares the one with the most free memory. The processes of a data-parallel run (`shapes.train.processes`,
under torchrun) claim their GPUs the same way but never share one: two such runs started by queue workers get
disjoint sets of GPUs. Free memory is read through NVML when nvidia-ml-py is installed (`pip install
nvidia-ml-py`), which opens no CUDA context; without it, CUDA reads it, which opens one on every GPU in the
choosing process (a few hundred MB each, for the process's life); `device: cuda:N`, or CUDA_VISIBLE_DEVICES naming
one GPU, skips the reading altogether.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from frozenbridge.core.config import valid_device_name
from frozenbridge.core.errors import FrozenbridgeError

DEVICE_ENV = "FROZENBRIDGE_DEVICE"


def _named(requested: str | None) -> tuple[str, str | None]:
    """(where the name comes from, the device named): the param unless it is `auto`, else $FROZENBRIDGE_DEVICE,
    else None (auto)."""
    if requested and requested != "auto":
        return "params.yaml: device", requested
    if os.environ.get(DEVICE_ENV):
        return DEVICE_ENV, os.environ[DEVICE_ENV]
    return "params.yaml: device", None


def mps_available() -> bool:
    """Whether Apple's GPU can run here: a torch built with MPS, on macOS 12.3 or newer, on a Mac with Metal."""
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available())


def wants_cuda(requested: str | None = None) -> bool:
    """Whether pick_device(requested) would give a CUDA device (without choosing one)."""
    name = _named(requested)[1]
    return name.startswith("cuda") if name else torch.cuda.is_available()


def auto_device() -> str:
    """`auto`'s choice: CUDA (the freest GPU when there are several), then Apple's GPU, then the CPU."""
    if torch.cuda.is_available():
        return "cuda" if torch.cuda.device_count() == 1 else f"cuda:{claim_gpu(free_memory())}"
    return "mps" if mps_available() else "cpu"


def pick_device(requested: str | None = None) -> torch.device:
    """The param (params.yaml `device`) unless it is `auto`, else $FROZENBRIDGE_DEVICE, else `auto_device()`."""
    source, name = _named(requested)
    if name is None:
        name = auto_device()
    if name == "auto" or not valid_device_name(name):
        raise FrozenbridgeError(f"{source} = {name!r} is not allowed; expected auto, cpu, cuda, cuda:N or mps")
    if name == "mps" and not mps_available():
        raise FrozenbridgeError(f"{source} = 'mps': Apple's GPU is not available here (it needs a Mac with Apple "
                                "silicon or a Metal GPU, macOS 12.3 or newer and a torch built with MPS); use cpu "
                                "or auto")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise FrozenbridgeError(f"{source} = {name!r}: no CUDA device is available here; use cpu or auto")
        index = int(name[5:]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise FrozenbridgeError(f"{source} = {name!r}: this machine has {torch.cuda.device_count()} CUDA "
                                    "device(s); use cuda:0 or auto")
    return torch.device(name)


def gpus_for_processes(processes: int, requested: str | None = None, key: str = "processes") -> bool:
    """Whether the `processes` processes of a data-parallel run go on GPUs, one each (checked before they start):
    a device naming one GPU (params.yaml or $FROZENBRIDGE_DEVICE), or fewer GPUs than processes, is refused. `key` is
    the params key that asked for the processes, for the error line."""
    source, name = _named(requested)
    if name == "mps":
        raise FrozenbridgeError(f"{source} = 'mps' is not allowed with {key} = {processes}: data-parallel processes "
                                f"run on CUDA GPUs (one each) or CPU cores; lower {key} to 1 or set device: cpu")
    if not wants_cuda(requested):
        return False
    if name and ":" in name:
        raise FrozenbridgeError(f"{source} = {name!r} is not allowed with {key} = {processes}; expected "
                                f"auto or cuda: each process takes a GPU of its own, and {name} would put them all "
                                "on one")
    if processes > torch.cuda.device_count():
        raise FrozenbridgeError(f"params.yaml: {key} = {processes} needs a GPU for each process and this "
                                f"machine has {torch.cuda.device_count()}; lower {key} (or set device: "
                                "cpu for processes on CPU cores)")
    return True


def free_memory() -> list[int]:
    """Each visible GPU's free bytes: total less what NVML says is used, as nvidia-smi shows it (no CUDA context),
    or, where NVML cannot answer (nvidia-ml-py not installed, no NVIDIA driver library), CUDA's own reading, which
    opens a context on each GPU."""
    indices = range(torch.cuda.device_count())
    try:
        return [torch.cuda.get_device_properties(i).total_memory - torch.cuda.device_memory_used(i) for i in indices]
    except Exception:  # pynvml missing (ModuleNotFoundError), or NVML failing to load or to answer (its own errors)
        return [torch.cuda.mem_get_info(i)[0] for i in indices]


LOCK_DIR = Path(tempfile.gettempdir())
_held: dict[int, object] = {}  # GPU index -> its open lock file, kept for the life of the process


def _lock_path(index: int) -> Path:
    """GPU `index`'s lock file, named by the GPU's UUID: the same GPU has other CUDA indices in processes with other
    CUDA_VISIBLE_DEVICES (the index where the UUID cannot be read)."""
    try:
        name = str(torch.cuda.get_device_properties(index).uuid)
    except Exception:  # CPU-only torch, or an old driver: no UUID to read
        name = str(index)
    return LOCK_DIR / f"frozenbridge-gpu-{name}.lock"


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


def claim_gpu(free: list[int], share: bool = True) -> int | None:
    """The index of the GPU to use given each GPU's free bytes: the freest one this process can lock (it keeps the
    lock), else, every GPU being held by another process, the freest one (None when not `share`)."""
    order = sorted(range(len(free)), key=lambda i: (-free[i], i))
    for index in order:
        if index in _held:
            return index
        lock = _try_lock(index)
        if lock is not None:
            _held[index] = lock
            return index
    return order[0] if share else None


def gpu_of_its_own(processes: int, key: str = "processes") -> torch.device:
    """This data-parallel process's GPU (under torchrun): the freest one no other frozenbridge process holds, the
    other processes of its own run included. Fails when every GPU is held, since NCCL cannot put two processes of
    one run on one GPU."""
    free = free_memory()
    index = claim_gpu(free, share=False)
    if index is None:
        raise FrozenbridgeError(f"{key} = {processes}: every one of the {len(free)} GPU(s) here is held by "
                                "another frozenbridge process (of this run or another experiment); lower "
                                f"{key} or run fewer queue workers at once")
    return torch.device("cuda", index)
