"""What a design does inside while it trains, kept beside its loss: every `every` steps (and before the first) the
design's own `inside` on a fixed sample of training pictures: each gate's tanh (cross-attention), how spread each
query's attention is (resampler), how many codes the pictures use (codebook). A design with nothing to show (the
MLP) gives nothing, and costs nothing. The sample is fixed and read without gradient, so logging changes no draw and
no weight."""

from __future__ import annotations

import torch

from frozenbridge.bridge.design import Design

EVERY = 50  # steps between looks, as the stop rule's checks and the sweep's curve points
PICTURES = 64  # the first training pictures, looked at each time


class InsideLog:
    def __init__(self, connector: Design, feats: torch.Tensor, device: torch.device, every: int = EVERY,
                 entries: list[dict] | None = None):
        self.connector, self.every = connector, every
        self.sample = feats[:PICTURES].to(device, torch.float32)
        self.entries: list[dict] = list(entries or [])

    def __call__(self, step: int) -> None:
        """After global step `step` (0: before training): look when due and not looked at yet."""
        if step % self.every or any(e["step"] == step for e in self.entries):
            return
        seen = self.connector.inside(self.sample)
        if seen:
            self.entries.append({"step": step, **seen})
