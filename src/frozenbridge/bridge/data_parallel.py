"""Data-parallel training of the connector (and any LoRA adapter) over processes, one per GPU, with torch.distributed.

Every process holds the whole frozen model and the cached features, and draws the same global batch from the same
seeded stream; each takes its share of the batch's items (every world-size-th one), so no item is seen twice. The
loss is the global batch's mean over target tokens, exactly as one process computes it: each process scales its
share's mean by its share of the target tokens, and the gradients of the trainable parameters are summed across
processes before the optimizer steps. Same global batch and seed, same loss curve (up to floating-point summation
order); the test runs two CPU processes on gloo against one.

    torchrun --nproc_per_node=4 your_script.py     # one process per GPU; RANK, WORLD_SIZE, LOCAL_RANK from torchrun
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Iterable

import torch
import torch.distributed as dist

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import unpack
from frozenbridge.core.device import gpu_of_its_own, gpus_for_processes


def world() -> tuple[int, int]:
    """(this process's rank, the number of processes); (0, 1) without torch.distributed."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def launch(processes: int, device: str | None = None, key: str = "processes") -> None:
    """Run this script again under torchrun as `processes` processes, and exit with their status, unless it is one
    of them already (or one process is asked for): the way a stage becomes data-parallel with no change to its
    command line in dvc.yaml. `device` is params.yaml's; on GPUs each process needs its own, so a device naming one
    GPU or more processes than GPUs fail here, before anything starts (core.device.gpus_for_processes)."""
    if processes <= 1 or "WORLD_SIZE" in os.environ:
        return
    gpus_for_processes(processes, device, key)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
           sys.argv[0], *sys.argv[1:]]
    sys.exit(subprocess.call(cmd))


def init_from_env(use_cuda: bool | None = None, key: str = "processes") -> torch.device | None:
    """Join the process group torchrun describes in the environment (NCCL on GPUs, gloo on CPUs) and return this
    process's device (`use_cuda`: default, when CUDA is available); None when the script was not started by
    torchrun (one process). On GPUs each process claims its own (core.device.gpu_of_its_own), so two runs started
    together (queue workers) do not land on the same GPUs."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return None
    use_cuda = torch.cuda.is_available() if use_cuda is None else use_cuda
    device = gpu_of_its_own(size, key) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo")
    return device


def target_tokens(vlm: VLM, items: list) -> int:
    """The target tokens (end-of-text included) of `items` (a packed row: its questions'): the positions the loss is
    averaged over."""
    return sum(len(vlm.tokens.target(item, True)) for item in unpack(items))


def broadcast_parameters(params: Iterable[torch.nn.Parameter]) -> None:
    """Every process starts from rank 0's trainable weights."""
    for p in params:
        dist.broadcast(p.data, src=0)


def sum_gradients(params: Iterable[torch.nn.Parameter]) -> None:
    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)


class DataParallel:
    """A VLM whose `loss` is computed on this process's share of the batch, scaled so the summed gradients equal the
    whole batch's; its value is the whole batch's loss (the same number on every process). Everything else is the
    wrapped VLM's."""

    def __init__(self, vlm: VLM):
        self.vlm = vlm

    def __getattr__(self, name):
        return getattr(self.vlm, name)

    def loss(self, items: list, feats: torch.Tensor) -> torch.Tensor:
        rank, size = world()
        mine = items[rank::size]
        total = target_tokens(self.vlm, items)
        if mine:
            share = self.vlm.loss(mine, feats) * (target_tokens(self.vlm, mine) / total)
        else:  # fewer items than processes: this one adds nothing but still joins the sums
            share = sum(p.sum() for p in self.trainable()) * 0.0
        value = share.detach().clone()
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        return share + (value - share.detach())  # the batch's loss as its value, this share's gradient

    def trainable(self) -> list[torch.nn.Parameter]:
        params = list(self.vlm.connector.parameters())
        params += [p for p in self.vlm.lm.model.parameters() if p.requires_grad]  # LoRA, when attached
        return params


class SummedGradients:
    """An optimizer that sums the trainable parameters' gradients across processes before each step (a thin wrapper:
    param_groups, state_dict, zero_grad are the wrapped optimizer's)."""

    def __init__(self, optimizer: torch.optim.Optimizer):
        self.optimizer = optimizer

    def __getattr__(self, name):
        return getattr(self.optimizer, name)

    def step(self, closure=None):
        sum_gradients(p for group in self.optimizer.param_groups for p in group["params"])
        return self.optimizer.step(closure)
