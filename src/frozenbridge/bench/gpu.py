"""GPU figures at the reference study's sizes (a SigLIP-B/16-sized encoder, a Qwen2.5-0.5B-sized language model) and
at the embedded language model's (SmolLM2-135M-sized).

    python -m frozenbridge.bench gpu --out bench/gpu-h200.json   # on a CUDA machine: bf16, batch 16, 49 image tokens
    python -m frozenbridge.bench gpu --tiny                       # the same code path at toy sizes, on any device

The models have random weights (the speed does not depend on them, and nothing is downloaded). Measured for each
language model: the seconds of one training step (connector + frozen LM forward/backward) eager in bf16 (and fp32 at
the reference size) with its peak memory; the same step launch-light (bench/launch_light.py): compiled by inductor,
and compiled with CUDA graphs, with the seconds of the first, compiling step; greedy generation throughput with the
dynamic KV cache, the static cache with its compiled decode step, and recomputing the sequence (batch 32, 20 new
tokens); encode throughput. A launch-light path that fails on this machine is printed as one line and left out.
Each row is a lone value (bench/rows.py's value_row: its unit, no second side); the GPU table of docs/results.md is
made from the JSON this writes.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from frozenbridge.bench.launch_light import compiled_step, static_generation
from frozenbridge.bench.parts import (QWEN25_05B, SMOLLM2_135M, TINY, caption_items, frozen_copy, generation,
                                      pictures, qwen_sized, siglip_b16, train_step)
from frozenbridge.bench.rows import machine_info, save_rows, value_row
from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.core.device import pick_device
from frozenbridge.core.measure import PeakMemory, mem_label, timed
from frozenbridge.core.precision import prepare_frozen


MODELS = {"reference": QWEN25_05B, "smollm2": SMOLLM2_135M}


def first_and_steady(step, reps: int) -> tuple[float, float]:
    """(seconds of the first call, which compiles or captures; the median of `reps` after it)."""
    start = time.perf_counter()
    step()
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
    return time.perf_counter() - start, timed(step, reps)


def attempt(label: str, fn):
    """fn()'s result, or None after one line saying why this path does not run here."""
    try:
        return fn()
    except Exception as err:  # noqa: BLE001 - a benchmark row left out, said in one line
        why = str(err).strip().splitlines()[0][:160] if str(err).strip() else ""
        print(f"{label}: not measured ({type(err).__name__}: {why})", file=sys.stderr)
        return None


def run(args) -> list[dict]:
    device = pick_device(args.device)
    batch, gen_batch, new_tokens, reps = (2, 4, 4, 1) if args.tiny else (16, 32, 20, 10)
    encoder = siglip_b16(1 if args.tiny else 12).to(device)
    pics = pictures(max(batch, gen_batch))
    feats = encoder.encode(pics)
    rows = []

    def add(measure: str, value: float, unit: str) -> None:
        rows.append(value_row(measure, value, unit))
        print(f"{measure}: {value:.4g} {unit}", file=sys.stderr, flush=True)  # as it goes: a run cut short keeps these

    items = caption_items(batch)
    for key in ["tiny"] if args.tiny else args.models:
        lm32 = qwen_sized(TINY if args.tiny else MODELS[key], device)
        prepare_frozen(lm32.model, device, bf16=False)
        lm = frozen_copy(lm32, device, bf16=True)
        name = lm.name.removeprefix("random ")
        torch.manual_seed(0)
        connector = MergedPatchMLP(encoder.output_shape, lm.width, merge=2).to(device)  # 14x14 -> 49 tokens
        what = f"{name}, train step, batch {batch}, {connector.n_out} image tokens"
        for label, model, bf16 in (("bf16", lm, True), ("fp32", lm32, False))[: 1 if key == "smollm2" else 2]:
            vlm = VLM(model, connector, device, bf16)
            step = train_step(vlm, feats, items)
            seconds = timed(step, reps)
            with PeakMemory(device, model.model) as mem:
                step()
            add(f"{what}, {label}, eager", seconds, "s")
            add(f"{what}, {label}: memory", mem.mb, mem_label(device))
        vlm = VLM(lm, connector, device, bf16=True)
        modes = (("compiled", None), ("compiled, CUDA graphs", "reduce-overhead"))
        for label, mode in modes if device.type == "cuda" else modes[:1]:  # CUDA graphs need CUDA
            got = attempt(f"{what}, {label}",
                          lambda mode=mode: first_and_steady(compiled_step(vlm, feats, items, mode), reps))
            if got is not None:
                add(f"{what}, bf16, {label}", got[1], "s")
                add(f"{what}, bf16, {label}: first step (compiling)", got[0], "s")
        cached, recompute = generation(vlm, feats, gen_batch, new_tokens)
        paths = (("KV cache", lambda: cached), ("static KV cache, compiled decode step",
                 lambda: static_generation(vlm, feats, gen_batch, new_tokens)), ("recompute", lambda: recompute))
        for label, make in paths:
            got = attempt(f"{name}, generation, {label}", lambda make=make: first_and_steady(make(), reps))
            if got is not None:
                add(f"{name}, generation, batch {gen_batch}, {new_tokens} new tokens, {label}",
                    gen_batch * new_tokens / got[1], "tokens/s")
        del lm, lm32, vlm
        if device.type == "cuda":
            torch.cuda.empty_cache()
    seconds = timed(lambda: encoder.encode(pics[:gen_batch]), reps)
    add(f"encode, {encoder.name}, batch {gen_batch}", gen_batch / seconds, "pictures/s")
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.bench gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", action="store_true", help="toy sizes, one repeat (checks the code path anywhere)")
    ap.add_argument("--device", default="auto",
                    help="auto ($FROZENBRIDGE_DEVICE, else CUDA, else Apple's GPU, else CPU), cpu, cuda, cuda:N or mps "
                         "(its figures are meant for a CUDA GPU)")
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS),
                    help="language-model sizes: reference (Qwen2.5-0.5B), smollm2 (SmolLM2-135M); default both")
    ap.add_argument("--out", "--json", dest="out", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = run(args)
    info = machine_info(pick_device(args.device), "tiny" if args.tiny else "full", "python -m frozenbridge.bench gpu")
    info["models"] = "tiny" if args.tiny else "random SigLIP-B/16-sized + " + " and ".join(
        {"reference": "random Qwen2.5-0.5B-sized", "smollm2": "random SmolLM2-135M-sized"}[m] for m in args.models)
    save_rows(args.out, rows, info)
