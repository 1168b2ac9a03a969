"""For a design whose blocks open through gates (cross-attention, designs/cross_attention.py): does a fresh model,
every gate at 0, give exactly the text model's logits? The text stage records the gap."""

from __future__ import annotations

import torch

from frozenbridge.core.precision import autocast


@torch.no_grad()
def zero_gate_gap(vlm, items: list, feats: torch.Tensor) -> float:
    """The largest |logit| difference between the language model alone and the same model reading the items'
    pictures through `vlm`'s blocks with every gate at 0, as a fresh model starts: 0 when the gate keeps its promise.
    The trained gates are put back afterwards."""
    trained = [gate.detach().clone() for gate in vlm.connector.gates()]
    batch, embeds, mask = vlm.inputs(items, feats, with_target=False, left_pad=False)
    with autocast(vlm.device, vlm.bf16):
        alone = vlm.lm.model(inputs_embeds=embeds, attention_mask=mask).logits
        try:
            for gate in vlm.connector.gates():
                gate.zero_()
            with vlm.reading(batch, feats):
                gated = vlm.lm.model(inputs_embeds=embeds, attention_mask=mask).logits
        finally:
            for gate, value in zip(vlm.connector.gates(), trained):
                gate.copy_(value)
    return float((gated.float() - alone.float()).abs().max())
