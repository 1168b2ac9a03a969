"""GPU figures at the reference study's sizes: a SigLIP-B/16-sized encoder and a Qwen2.5-0.5B-sized language model.

    python -m frozenbridge.tools.bench_gpu --json bench/gpu.json    # on a CUDA machine: bf16, batch 16, 49 image tokens
    python -m frozenbridge.tools.bench_gpu --tiny                    # the same code path at toy sizes, on any device

Both models have random weights (the speed does not depend on them, and nothing is downloaded). Measured: the
seconds of one training step (connector + frozen LM forward/backward, bf16 and fp32) with its peak memory,
greedy generation throughput with the KV cache (batch 32, 20 new tokens) against recomputing the sequence, and
encode throughput. The GPU table of docs/results.md is made from the JSON this writes.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from frozenbridge.bridge.connector import Connector
from frozenbridge.bridge.model import VLM
from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.device import pick_device
from frozenbridge.core.measure import PeakMemory, machine, mem_label, timed
from frozenbridge.core.precision import prepare_frozen
from frozenbridge.testing.tiny_models import build_tokenizer
from frozenbridge.tools.bench_parts import caption_items, frozen_copy, generation, pictures, siglip_b16, train_step

QWEN25_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                  num_key_value_heads=2, vocab_size=151936, rope_theta=1e6, rms_norm_eps=1e-6,
                  max_position_embeddings=32768)  # Qwen/Qwen2.5-0.5B's config.json (tied embeddings below)
TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=512)


def qwen_sized(sizes: dict, device: torch.device) -> LanguageModel:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = build_tokenizer(Path(tmp))
    config = Qwen2Config(**{"max_position_embeddings": 4096, **sizes}, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen2ForCausalLM(config).eval()
    name = "random Qwen2.5-0.5B-sized" if sizes is QWEN25_05B else "random tiny Qwen2"
    return LanguageModel(name, "random", model, tokenizer)


def run(args) -> list[dict]:
    device = pick_device(args.device)
    batch, gen_batch, new_tokens, reps = (2, 4, 4, 1) if args.tiny else (16, 32, 20, 5)
    encoder = siglip_b16(1 if args.tiny else 12).to(device)
    lm32 = qwen_sized(TINY if args.tiny else QWEN25_05B, device)
    prepare_frozen(lm32.model, device, bf16=False)
    lm = frozen_copy(lm32, device, bf16=True)
    pics = pictures(max(batch, gen_batch))
    feats = encoder.encode(pics)
    connector = Connector(encoder.output_shape, lm.width, merge=2).to(device)  # 14x14 -> 49 tokens
    rows = []

    def row(measure, value, unit):
        rows.append({"measure": measure, "value": value, "unit": unit})

    items = caption_items(batch)
    for label, model, bf16 in (("bf16", lm, True), ("fp32", lm32, False)):
        vlm = VLM(model, connector, device, bf16)
        step = train_step(vlm, feats, items)
        seconds = timed(step, reps)
        with PeakMemory(device, model.model) as mem:
            step()
        row(f"train step, batch {batch}, {connector.n_out} image tokens, {label}", seconds, "s")
        row(f"train step, batch {batch}, {label}: memory", mem.mb, mem_label(device))

    cached, recompute = generation(VLM(lm, connector, device, bf16=True), feats, gen_batch, new_tokens)
    for label, fn in (("KV cache", cached), ("recompute", recompute)):
        seconds = timed(fn, reps)
        row(f"generation, batch {gen_batch}, {new_tokens} new tokens, {label}", gen_batch * new_tokens / seconds,
            "tokens/s")
    seconds = timed(lambda: encoder.encode(pics[:gen_batch]), reps)
    row(f"encode, {encoder.name}, batch {gen_batch}", gen_batch / seconds, "pictures/s")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.bench_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", action="store_true", help="toy sizes, one repeat (checks the code path anywhere)")
    ap.add_argument("--device", default="auto",
                    help="auto ($FROZENBRIDGE_DEVICE, else CUDA, else Apple's GPU, else CPU), cpu, cuda, cuda:N or mps "
                         "(its figures are meant for a CUDA GPU)")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args()
    rows = run(args)
    info = machine(pick_device(args.device), args.tiny)
    info["models"] = "random SigLIP-B/16-sized + random Qwen2.5-0.5B-sized" if not args.tiny else "tiny"
    print(f"{info['device']}, torch {info['torch']}, {info['models']}")
    for r in rows:
        print(f"{r['measure']:<60} {r['value']:>12.4g} {r['unit']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
