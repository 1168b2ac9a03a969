"""Receipts: two facts about the frozen parts, measured rather than asserted.

1. A ViT's patch embedding is a convolution whose kernel equals its stride, which is the same as cutting the
   picture into patches, flattening each, and one matrix product: the largest difference between the two is printed.
2. Attention in the encoder is bidirectional and in the language model causal: change only the last input
   position and the first position's output moves in the encoder, and not at all (exactly 0) in the language model.
"""

from __future__ import annotations

import torch
from torch import nn


def patch_conv(model: nn.Module) -> nn.Conv2d | None:
    """The first convolution whose kernel equals its stride (a ViT-family patch embedding), or None."""
    return next((m for m in model.modules() if isinstance(m, nn.Conv2d) and m.kernel_size == m.stride
                 and m.kernel_size[0] > 1 and m.in_channels == 3), None)


@torch.no_grad()
def conv_equals_matmul(conv: nn.Conv2d, pixels: torch.Tensor) -> float:
    """Max |conv(pixels) - flattened patches @ W^T + b| over every patch and channel."""
    pixels = pixels.to(conv.weight.dtype)
    by_conv = conv(pixels).flatten(2).transpose(1, 2)  # (B, patches, width), row-major
    kh, kw = conv.kernel_size
    patches = pixels.unfold(2, kh, kh).unfold(3, kw, kw)  # (B, C, rows, cols, kh, kw)
    patches = patches.permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2)  # (B, patches, C*kh*kw)
    by_matmul = patches @ conv.weight.flatten(1).T + (conv.bias if conv.bias is not None else 0)
    return float((by_conv - by_matmul).abs().max())


@torch.no_grad()
def encoder_first_moves(forward, pixels: torch.Tensor, patch: int) -> float:
    """Max change of the first output token when only the bottom-right `patch` x `patch` pixels change."""
    changed = pixels.clone()
    changed[..., -patch:, -patch:] = -changed[..., -patch:, -patch:] + 1.0
    return float((forward(changed)[:, 0] - forward(pixels)[:, 0]).abs().max())


@torch.no_grad()
def language_first_moves(model: nn.Module, embeds: torch.Tensor) -> float:
    """Max change of the first position's last hidden state when only the last input embedding changes."""
    changed = embeds.clone()
    changed[:, -1] = changed[:, -1] * -3.0 + 1.0
    decoder = model.get_decoder()
    first = decoder(inputs_embeds=embeds, use_cache=False).last_hidden_state[:, 0]
    again = decoder(inputs_embeds=changed, use_cache=False).last_hidden_state[:, 0]
    return float((again - first).abs().max())
