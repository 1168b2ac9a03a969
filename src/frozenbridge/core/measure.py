"""Measuring on this machine: median wall time of a call, peak memory of a training step, matmul FLOPs and the
machine's own matmul throughput, and a description of the machine for saved results."""

from __future__ import annotations

import statistics
import time

import torch

from frozenbridge.core.precision import cpu_has_bf16


class PeakMemory:
    """Memory a training step needs beyond the weights.

    CUDA: the allocator's peak during the step. CPU has no allocator statistics, so it counts the bytes of every
    tensor autograd saves for the backward pass (the activations), which is what grows with tokens and batch;
    the weights of `model` are not counted (they are saved by reference, not copied).
    """

    def __init__(self, device: torch.device, model: torch.nn.Module):
        self.device, self.bytes = device, 0
        self._seen = {(p.untyped_storage().data_ptr(), p.untyped_storage().nbytes()) for p in model.parameters()}

    def _pack(self, t: torch.Tensor):
        key = (t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
        if key not in self._seen:
            self._seen.add(key)
            self.bytes += key[1]
        return t

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
        else:
            self.hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
            self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.bytes = torch.cuda.max_memory_allocated(self.device) - self.base
        else:
            self.hooks.__exit__(*exc)
        self.mb = self.bytes / 2**20


def timed(fn, reps: int) -> float:
    """Median seconds of `reps` calls after one warm-up call (on CUDA, until the queued kernels have finished)."""
    def call():
        fn()
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    call()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def step_flops(step) -> int:
    """Matmul FLOPs of one call of `step` (forward and backward), counted by PyTorch from the operands' shapes."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def matmul_peak(device: torch.device, dtype: torch.dtype, n: int, reps: int) -> float:
    """This machine's own matmul throughput in FLOP/s: the best of a few large square products in `dtype`."""
    best = 0.0
    for size in (n // 2, n, 2 * n):
        a = torch.randn(size, size, device=device, dtype=dtype)
        b = torch.randn(size, size, device=device, dtype=dtype)
        best = max(best, 2 * size ** 3 / timed(lambda: a @ b, max(3, reps)))
    return best


def mem_label(device: torch.device) -> str:
    return "peak MB" if device.type == "cuda" else "saved for backward MB"


def machine(device: torch.device, quick: bool) -> dict:
    import os
    import platform

    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    elif device.type == "mps":
        name = f"Apple GPU ({torch.backends.mps.get_name()}, macOS {platform.mac_ver()[0]})"
    else:
        name = f"CPU, {os.cpu_count()} cores, {platform.machine()}, bf16 {'yes' if cpu_has_bf16() else 'no'}"
    return {"device": name, "torch": torch.__version__, "mode": "quick" if quick else "full",
            "date": time.strftime("%Y-%m-%d")}
