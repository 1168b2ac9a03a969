"""The only part that trains once both models are frozen: a picture's vector -> Linear -> GELU -> Linear -> `tokens`
vectors of the language model's width, put into the first slots in front of the text (the rest keep the null).

`init: learned_null` starts the adapter exactly at what the language model was trained with (last layer zero, its
bias the learned null), so before any adapter training the captions are the language model's own sentence, one for
every picture. `init: random` is PyTorch's default initialisation, as the reference did.
"""

from __future__ import annotations

import torch
from torch import nn


class Adapter(nn.Module):
    def __init__(self, inputs: int, width: int, tokens: int, null: torch.Tensor, init: str = "learned_null"):
        super().__init__()
        self.tokens, self.width = tokens, width
        self.net = nn.Sequential(nn.Linear(inputs, inputs), nn.GELU(), nn.Linear(inputs, tokens * width))
        null = null.detach().reshape(-1, width)
        if init == "learned_null":
            with torch.no_grad():
                self.net[2].weight.zero_()
                self.net[2].bias.copy_(null[:tokens].reshape(-1))
        self.register_buffer("rest", null[tokens:].clone())  # slots the adapter does not fill

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        """(batch, inputs) -> (batch, slots, width)."""
        made = self.net(vectors).view(len(vectors), self.tokens, self.width)
        return torch.cat([made, self.rest.expand(len(vectors), -1, -1)], dim=1)

    def trainable(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
