"""The connector's training step and the loop over a phase's steps, its learning rate following core.schedule: one
implementation for every study, for the pipeline and for the convergence sweep alike."""

from __future__ import annotations

import logging
from typing import Callable, Iterator

import torch
from tqdm import tqdm

from frozenbridge.bridge.model import VLM
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.forecast import StepClock, forecast_line
from frozenbridge.core.precision import describe
from frozenbridge.core.schedule import lr_factor

log = logging.getLogger("frozenbridge.train")


def training_step(vlm: VLM, items: list, feats: torch.Tensor, optimizer: torch.optim.Optimizer) -> torch.Tensor:
    """One optimizer step on a batch of items; returns the loss (before the step)."""
    loss = vlm.loss(items, feats)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def train_steps(vlm: VLM, batches: Iterator[list], feats: torch.Tensor, optimizer: torch.optim.Optimizer,
                steps: int, name: str, desc: str | None = None, done: int = 0,
                schedule: tuple[str, float] = ("constant", 0.0), schedule_steps: int | None = None, first_step: int = 0,
                after_step: Callable[[int, float], bool | None] | None = None,
                more: tuple[str, int] | None = None, least: int | None = None) -> None:
    """Steps `done`..`steps` (`done` > 0 when resuming), the learning rate following `schedule` over
    `schedule_steps` (default `steps`). `after_step(n, loss)` runs after step n and ends the loop when it returns
    True. A loss that is not finite stops with a clear error naming the run (`name`) and the step (counted from
    `first_step`); `desc` labels the progress bar. After its first few steps the loop logs one line: device,
    precision, step time and the time its steps take (and `more` = (what, steps) at that step time), and a second
    line at about a tenth of the loop if the pace has moved since; `least`: a loop that `after_step` may end after
    `least` steps, whose line gives both ends."""
    for group in optimizer.param_groups:
        group.setdefault("base_lr", group["lr"])
    clock = StepClock(steps - done)
    for step in tqdm(range(done, steps), desc=desc or name, unit="step", initial=done, total=steps):
        for group in optimizer.param_groups:
            group["lr"] = group["base_lr"] * lr_factor(step, schedule_steps or steps, *schedule)
        loss = training_step(vlm, next(batches), feats, optimizer)
        if not torch.isfinite(loss):
            raise FrozenbridgeError(f"{name}: loss is {loss.item()} at step {first_step + step + 1}; stopped, no "
                                    "metrics written (lower the learning rate or check the features)")
        pace = clock.lap()
        if pace is not None:  # the first look, then a second if the pace has moved since (core.forecast)
            ran = done + pace.last if pace.earlier is not None else done
            log.info("%s", forecast_line(name, vlm.device, describe(vlm.bf16), pace, steps - ran, more,
                                         None if least is None else max(0, least - ran)))
        if after_step is not None and after_step(step + 1, float(loss.item())):
            return
