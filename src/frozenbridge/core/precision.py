"""Device and precision: bf16 for the frozen language model where the hardware has it, fp32 otherwise.

bf16 here means a persistent bf16 copy of the frozen weights (they never change, so there is no fp32 master copy
to keep) run under autocast. Autocast alone re-casts every frozen weight on every forward pass and keeps the copies
for backward; casting once makes a training step about 1.2x faster again on a 2-core CPU (`python -m
frozenbridge.tools.bench`). The residual stream (input embeddings, image tokens) stays fp32, and so do the connector's
weights, any LoRA adapter and the optimizer: only the frozen model's matmuls run in bf16.

On CPU with bf16, attention runs through the plain matmul path ("eager"): for these short sequences it is faster
than PyTorch's fused CPU attention, whose backward in bf16 took a fifth of the step.
"""

from __future__ import annotations

import contextlib

import torch


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


def prepare_frozen(model: torch.nn.Module, device: torch.device, bf16: bool) -> torch.nn.Module:
    """Move the frozen language model to `device`, in bf16 (with CPU-friendly attention) or fp32.

    LayerNorm weights stay fp32 under bf16: on CPU, layer_norm takes bf16 or fp32 input with fp32 weights but
    refuses fp32 input with bf16 weights ("mixed dtype (CPU)"), and LayerNorm families (GPT-2, OPT, Phi,
    GPT-NeoX) feed it fp32 where an fp32 embedding meets a bf16 one. RMSNorm families have no nn.LayerNorm."""
    model.to(device, torch.bfloat16 if bf16 else torch.float32)
    if bf16:
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.float()
    if bf16 and device.type == "cpu" and hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    return model


def compile_layers(model: torch.nn.Module) -> int:
    """torch.compile (inductor) each decoder layer in place, shapes dynamic; returns how many. Compiling layer by
    layer fuses the norms, activations and casts between the matmuls at a fraction of a whole-model compile's time.
    The first step pays the compile (the benchmark's rows give both sides)."""
    layers = getattr(model.get_decoder(), "layers", [])
    for layer in layers:
        layer.compile(dynamic=True)
    return len(layers)


def autocast(device: torch.device, bf16: bool):
    return torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def describe(bf16: bool) -> str:
    return "bf16 weights + autocast" if bf16 else "fp32"
