"""Device and precision: bf16 for the frozen language model where the hardware has it, fp32 otherwise.

bf16 here means a persistent bf16 copy of the frozen weights (they never change, so there is no fp32 master copy
to keep) run under autocast. Autocast alone re-casts every frozen weight on every forward pass and keeps the copies
for backward; casting once is faster (`python -m frozenbridge.bench steps`, the "bf16 weights" row). The residual
stream (input embeddings, image tokens) stays fp32, and so do the connector's weights, any LoRA adapter and the
optimizer: only the frozen model's matmuls run in bf16.

On CPU with bf16, attention runs through the plain matmul path ("eager"). Apple's GPU (MPS) takes bf16 from macOS 14
on (`mps_bf16`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

import torch

from frozenbridge.core.errors import FrozenbridgeError


def cpu_has_bf16() -> bool:
    check = getattr(torch.cpu, "_is_avx512_bf16_supported", None) or getattr(torch.cpu, "_is_amx_tile_supported", None)
    try:
        return bool(check and check())
    except RuntimeError:  # pragma: no cover - depends on the CPU
        return False


def mps_bf16() -> tuple[bool, str]:
    """(whether Apple's GPU runs bf16 here, why): MPS has bf16 from macOS 14 (Sonoma) on, and this checks it on the
    device itself with one small bf16 matmul, so an OS or chip that refuses it is caught here, not mid-run. (On M1
    and M2 Metal emulates bf16: it works, it is not faster; `precision: fp32` is the choice there.)"""
    if not torch.backends.mps.is_macos_or_newer(14, 0):
        return False, "Apple's GPU runs bf16 from macOS 14 on, and this Mac runs an older macOS"
    try:
        _bf16_matmul("mps")
    except (RuntimeError, TypeError) as err:
        return False, f"this Apple GPU refused a bf16 matmul ({str(err).strip().splitlines()[0][:120]})"
    return True, "macOS 14 or newer, and this Apple GPU ran a bf16 matmul"


def _bf16_matmul(device: str) -> None:
    x = torch.ones(2, 2, device=device, dtype=torch.bfloat16)
    (x @ x).cpu()


def bf16_choice(precision: str, device: torch.device) -> tuple[bool, str]:
    """(bf16 or not, why) for a params value `precision` (auto, bf16, fp32) on `device`: auto takes bf16 where the
    hardware has it (a CUDA GPU that supports it, a CPU with AVX512-BF16 or AMX, Apple's GPU on macOS 14+)."""
    if precision == "fp32":
        return False, "precision: fp32 asks for it"
    if device.type == "mps":
        ok, why = mps_bf16()
        if precision == "bf16" and not ok:
            raise FrozenbridgeError(f"precision = 'bf16' cannot run on mps: {why}; use auto or fp32")
        return ok, f"precision: bf16 asks for it ({why})" if precision == "bf16" else why
    if precision == "bf16":
        return True, "precision: bf16 asks for it"
    if device.type == "cuda":
        ok = torch.cuda.is_bf16_supported()
        return ok, "this GPU supports bf16" if ok else "this GPU has no bf16"
    if cpu_has_bf16():
        return True, "this CPU has bf16 instructions (AVX512-BF16 or AMX)"
    return False, ("this CPU has no bf16 instructions (neither AVX512-BF16 nor AMX), so the frozen model runs in "
                   "fp32, several times slower")


def use_bf16(precision: str, device: torch.device) -> bool:
    return bf16_choice(precision, device)[0]


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
    The first step pays the compile, once per machine: inductor keeps what it builds in a cache on disk
    (`compile_cache`), so every later stage and replicate loads it."""
    decoder = model.get_decoder()
    layers = getattr(decoder, "layers", None) or getattr(decoder, "h", [])  # Llama-likes; GPT-2, BLOOM, Falcon
    for layer in layers:
        layer.compile(dynamic=True)
    return len(layers)


def compile_cache() -> Path:
    """Where inductor keeps compiled kernels between processes, so that one compile serves every later stage and
    replicate on the machine: its own cache, $TORCHINDUCTOR_CACHE_DIR where set, else torchinductor_<user> in the
    temporary directory (gone when that is cleared, as at a reboot; the next compile fills it again)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return Path(cache_dir())


def cpp_compiler() -> str | None:
    """The C++ compiler inductor builds CPU kernels with ($CXX, else g++; clang++ on macOS), or None where absent."""
    return shutil.which(os.environ.get("CXX") or ("clang++" if sys.platform == "darwin" else "g++"))


def compile_choice(setting: bool | str, device: torch.device) -> tuple[bool, str]:
    """(compile the decoder layers for this run or not, why) for `shapes.train.compile` = `setting`: true and false
    decide alone; auto compiles where the benchmark measured it faster: every training step, captions and packed
    questions alike, on a CPU with a C++ compiler (`python -m frozenbridge.bench step_levers`, the "compiled decoder
    layers" rows: the caption step 1.30x on a 2-core AMD EPYC with AVX512-BF16, 1.49x on the Intel machine with AMX;
    the packed question step `bench floor`'s compiled row)."""
    if setting is True or setting is False:
        return setting, f"train.compile: {str(setting).lower()} asks for it"
    if device.type != "cpu":
        return False, (f"train.compile: auto compiles on a CPU only (measured there); set true to compile on "
                       f"{device.type}")
    if cpp_compiler() is None:
        return False, ("train.compile: auto found no C++ compiler (g++, or $CXX) for inductor, so training steps run "
                       "eager, slower (install g++ to compile them)")
    return True, "train.compile: auto compiles the training steps on a CPU with a C++ compiler"


def autocast(device: torch.device, bf16: bool):
    return torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def describe(bf16: bool) -> str:
    return "bf16 weights + autocast" if bf16 else "fp32"
