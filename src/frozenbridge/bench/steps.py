"""Where the time goes: side-by-side measurements on this machine, printed as a table of ratios.

    python -m frozenbridge.bench steps            # full run with the embedded backbones
    python -m frozenbridge.bench steps --quick    # the same table with smaller batches and fewer repeats

Rows: cached vs recompute generation (20 new tokens, batch 32); target-only vs full-vocabulary logits; bf16
vs fp32 training step, and bf16 weights cast once vs autocast alone; the step's matmul throughput (FLOPs counted
from the shapes) as a fraction of this machine's own matmul throughput; every decoder layer compiled by inductor
vs eager (full mode only: compiling takes a while); a step from cached features vs encoding the pictures inside the
step (embedded encoder and a SigLIP-B/16-sized one with random weights); step time and peak memory as image tokens
grow (1, 16, 49, 196) and as the batch grows; encode throughput. Speeds are measured, never asserted.
Question steps: 5 pictures with 16 questions packed by picture (the picture's tokens once) vs the same 16 questions
each in its own sequence, their loss and gradient equal; the packed step with a 3x3 merge (25 image tokens) and with
compiled layers; and, from the profiler, where a packed question step's time goes, by operator: matmuls vs the rest.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch

from frozenbridge.bench.parts import (caption_items, frozen_copy, generation, operator_breakdown, pictures,
                                      question_rows, siglip_b16, train_step)
from frozenbridge.bench.rows import machine_info, row, save_rows
from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import unpack
from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.device import pick_device
from frozenbridge.core.measure import PeakMemory, matmul_peak, mem_label, step_flops, timed
from frozenbridge.core.precision import compile_layers, prepare_frozen, use_bf16


@dataclass
class Sizes:
    batch: int
    gen_batch: int
    new_tokens: int
    reps: int
    batches: tuple[int, ...]
    siglip_layers: int
    peak_size: int  # side of the middle square matmul of the peak measurement
    question_pictures: int = 5  # a question batch: 5 pictures with 16 questions (the training default)
    questions: int = 16


FULL = Sizes(batch=16, gen_batch=32, new_tokens=20, reps=3, batches=(4, 8, 16, 32), siglip_layers=12, peak_size=2048)
QUICK = Sizes(batch=2, gen_batch=4, new_tokens=6, reps=1, batches=(1, 2), siglip_layers=2, peak_size=512,
              question_pictures=2, questions=6)


def run(args) -> list[dict]:
    sizes = QUICK if args.quick else FULL
    device = pick_device(args.device)
    torch.manual_seed(0)
    lm32 = load_language(args.language)
    prepare_frozen(lm32.model, device, bf16=False)
    bf16 = use_bf16("auto", device)
    lm = frozen_copy(lm32, device, bf16)  # what training uses here: bf16 where the hardware has it
    encoder = load_vision(args.vision, "patches", 10).to(device)
    shape = encoder.output_shape
    rows: list[dict] = []

    def add(*args, **kwargs) -> None:
        rows.append(row(*args, **kwargs))

    pics = pictures(max(sizes.gen_batch, sizes.batch, max(sizes.batches)))
    feats = encoder.encode(pics)
    connector = MergedPatchMLP(shape, lm.width, merge=2).to(device)
    vlm = VLM(lm, connector, device, bf16)

    # 1. generation: one prefill + cached steps vs re-running the sequence for every token
    n = sizes.new_tokens
    cached, recompute = generation(vlm, feats, sizes.gen_batch, n)
    add(f"generation, {n} new tokens, batch {sizes.gen_batch}", "KV cache", timed(cached, sizes.reps),
        "recompute", timed(recompute, sizes.reps))

    # 2. logits only at target positions vs the whole vocabulary at every position
    batch_items = caption_items(sizes.batch)
    add(f"train step, batch {sizes.batch}: logits",
        "targets only", timed(train_step(vlm, feats, batch_items), sizes.reps),
        "every position", timed(train_step(vlm, feats, batch_items, full_logits=True), sizes.reps))

    # 3. bf16 vs fp32 for the frozen model; and what casting the frozen weights once adds to autocast alone
    bf = VLM(lm if bf16 else frozen_copy(lm32, device, True), connector, device, bf16=True)
    fp32 = VLM(lm32, connector, device, bf16=False)
    autocast_only = VLM(lm32, connector, device, bf16=True)
    bf_seconds = timed(train_step(bf, feats, batch_items), sizes.reps)
    add(f"train step, batch {sizes.batch}: precision", "bf16", bf_seconds,
        "fp32", timed(train_step(fp32, feats, batch_items), sizes.reps))
    add(f"train step, batch {sizes.batch}: bf16 weights", "cast once", bf_seconds,
        "autocast only", timed(train_step(autocast_only, feats, batch_items), sizes.reps))

    # 3b. how close the step comes to this machine's own matmul throughput (FLOPs counted from the shapes)
    seconds = timed(train_step(vlm, feats, batch_items), sizes.reps)
    flops = step_flops(train_step(vlm, feats, batch_items))
    peak = matmul_peak(device, torch.bfloat16 if bf16 else torch.float32, sizes.peak_size, sizes.reps)

    def throughput(measure: str, step_seconds: float, step_flops_: int = flops) -> None:
        """The step's matmul FLOPs over its time, as a fraction of the machine's own matmul throughput."""
        add(f"{measure}: matmul throughput, GFLOP/s", f"{'bf16' if bf16 else 'fp32'} matmul peak", peak / 1e9,
            f"step ({step_flops_ / 1e9:.0f} GFLOP in {step_seconds:.3g} s)", step_flops_ / step_seconds / 1e9,
            ratio=step_flops_ / step_seconds / peak, fraction=True)
    throughput(f"train step, batch {sizes.batch}, 49 image tokens", seconds)

    # 3c. an attempt at the rest of the step (norms, activations, casts): each decoder layer compiled by inductor
    if not args.quick:
        fused = VLM(frozen_copy(lm32, device, bf16), connector, device, bf16)
        layers = compile_layers(fused.lm.model)
        step = train_step(fused, feats, batch_items)
        start = time.perf_counter()
        step()  # compiles
        first = time.perf_counter() - start
        compiled_seconds = timed(step, sizes.reps)
        add(f"train step, batch {sizes.batch}: torch.compile each decoder layer", "compiled", compiled_seconds,
            "eager", seconds)
        throughput(f"train step, batch {sizes.batch}, compiled layers", compiled_seconds)
        add(f"torch.compile each decoder layer ({layers}): first step", "s (compiling)", first,
            "s it saves a step (pays back after first / saved steps)", seconds - compiled_seconds, ratio=False)

    # 3d. question steps: whole pictures with their questions packed (the picture's tokens once) vs each question in
    # its own sequence
    rows_q = question_rows(sizes.question_pictures, sizes.questions)
    packed_seconds = timed(train_step(vlm, feats, rows_q), sizes.reps)
    add(f"question step, {sizes.questions} questions on {sizes.question_pictures} pictures",
        "packed by picture", packed_seconds, "each in its own sequence",
        timed(train_step(vlm, feats, unpack(rows_q)), sizes.reps))
    shape3 = MergedPatchMLP(shape, lm.width, merge=3).to(device)
    merge3 = VLM(lm, shape3, device, bf16)
    add(f"question step, packed: {shape3.n_out} image tokens (3x3 merge)", f"{shape3.n_out} tokens",
        timed(train_step(merge3, feats, rows_q), sizes.reps), f"{connector.n_out} (2x2)", packed_seconds)
    throughput("question step, packed", packed_seconds, step_flops(train_step(vlm, feats, rows_q)))
    if not args.quick:
        compiled_packed = timed(train_step(fused, feats, rows_q), sizes.reps + 1)
        add("question step, packed: torch.compile each decoder layer", "compiled", compiled_packed, "eager",
            packed_seconds)
    for name, share in operator_breakdown(train_step(vlm, feats, rows_q)):
        add(f"  packed question step, self CPU: {name[:36]}", "of the step", share, "s", share * packed_seconds,
            ratio=share, fraction=True)

    # 4. cached features vs encoding the pictures inside every step
    for label, enc in (("embedded encoder", encoder), ("SigLIP-B/16-sized encoder", siglip_b16(sizes.siglip_layers))):
        conn = MergedPatchMLP(enc.output_shape, lm.width, merge=2).to(device)
        model = VLM(lm, conn, device, bf16)
        cached_feats = enc.encode(pics[: sizes.batch])
        step = train_step(model, cached_feats, batch_items)

        def encode_then_step(enc=enc, step=step):
            enc.encode(pics[: sizes.batch])
            step()
        add(f"train step, batch {sizes.batch}: {label}", "cached features", timed(step, sizes.reps),
            "encode in the step", timed(encode_then_step, sizes.reps))

    # 5. image tokens and batch size: step time and peak memory
    for tokens, fshape in ((1, [shape[-1]]), (16, [4, 4, 64]), (49, [7, 7, 64]), (196, [14, 14, 64])):
        conn = MergedPatchMLP(fshape, lm.width, merge=1).to(device)
        model = VLM(lm, conn, device, bf16)
        f = torch.randn(sizes.batch, 1 if len(fshape) == 1 else fshape[0] * fshape[1], fshape[-1])
        step = train_step(model, f, batch_items)
        seconds = timed(step, sizes.reps)
        with PeakMemory(device, lm.model) as mem:
            step()
        add(f"{tokens} image tokens, batch {sizes.batch}", "step s", seconds, mem_label(device), mem.mb, ratio=False)
    for b in sizes.batches:
        step = train_step(vlm, feats, caption_items(b))
        seconds = timed(step, sizes.reps)
        with PeakMemory(device, lm.model) as mem:
            step()
        add(f"batch {b}, 49 image tokens", "step s", seconds, mem_label(device), mem.mb, ratio=False)

    # 6. encode throughput of the embedded encoder
    batch = pics[: sizes.gen_batch]
    seconds = timed(lambda: encoder.encode(batch), sizes.reps)
    add(f"encode, batch {len(batch)}", "pictures/s", len(batch) / seconds, "s a picture", seconds / len(batch),
        ratio=False)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.bench steps", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="small sizes, one repeat: every row of the table, quickly (the tests run it)")
    ap.add_argument("--device", default="auto",
                    help="auto ($FROZENBRIDGE_DEVICE, else CUDA, else Apple's GPU, else CPU), cpu, cuda, cuda:N or mps")
    ap.add_argument("--vision", default="efficientnet-lite0", help="vision backbone (default: embedded)")
    ap.add_argument("--language", default="smollm2-135m", help="language model (default: embedded)")
    ap.add_argument("--out", "--json", dest="out", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = run(args)
    mode = "quick" if args.quick else "full"
    save_rows(args.out, rows, machine_info(pick_device(args.device), mode, "python -m frozenbridge.bench steps"))
