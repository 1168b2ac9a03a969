"""What the benchmarks time, shared by the benchmarks and by tools.forecast and tools.repro_timing (no `main`: it
measures nothing itself): stand-in pictures, caption and packed question batches, a connector design on a model,
one training step (target-only or full-vocabulary logits; or a whole optimizer step), greedy generation with and
without the KV cache, self time by operator, two calls timed in turns, and a SigLIP-B/16-sized encoder and
Qwen2-family language models of given sizes with random weights."""

from __future__ import annotations

import copy
import statistics
import tempfile
import time
from pathlib import Path

import torch
from PIL import Image

from frozenbridge.bridge.greedy import greedy_recompute
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import IGNORE, Item, Packed
from frozenbridge.core.precision import autocast, prepare_frozen
from frozenbridge.shapes.data.draw import render
from frozenbridge.shapes.data.scene import Shape

CAPTION = "an orange circle, a yellow circle and a purple triangle"


def pictures(n: int) -> list[Image.Image]:
    return [render([Shape("red", "circle", 40.0 + i % 5 * 30, 60.0, 40.0), Shape("blue", "square", 170.0, 150.0, 45.0)],
                   224) for i in range(n)]


def caption_items(n: int) -> list[Item]:
    return [Item(i, "Caption:", CAPTION) for i in range(n)]


QUESTIONS = ("How many shapes are there?", "What color is the circle?", "What color is the square?",
             "What color is the leftmost shape?")
ANSWERS = ("two", "red", "blue", "red")


def question_rows(pictures: int, questions: int) -> list[Packed]:
    """`questions` shapes-study questions over `pictures` pictures (3 or 4 each, as the training pictures have),
    each picture a packed row."""
    per = [questions // pictures + (i < questions % pictures) for i in range(pictures)]
    return [Packed(i, tuple((f"Question: {q} Answer:", a) for q, a in list(zip(QUESTIONS, ANSWERS))[:n]))
            for i, n in enumerate(per)]


MATMULS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear", "aten::_scaled_dot_product")


def self_times(step) -> list[tuple[str, float]]:
    """Self CPU time by operator over one call of `step` after a warm one (torch.profiler), as shares of the call,
    largest first."""
    from torch.profiler import ProfilerActivity, profile

    step()  # warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    times = sorted(((e.key, e.self_cpu_time_total) for e in prof.key_averages()), key=lambda kv: -kv[1])
    total = sum(t for _, t in times) or 1.0
    return [(key, t / total) for key, t in times]


def operator_breakdown(step, top: int = 8) -> list[tuple[str, float]]:
    """Self CPU time by operator over one step, as shares of the step: matmuls together, then the `top` largest
    other operators, then the rest."""
    shares = self_times(step)
    others = [(k, s) for k, s in shares if not k.startswith(MATMULS)]
    out = [("matmuls (mm, addmm, bmm, attention)", sum(s for k, s in shares if k.startswith(MATMULS)))]
    out += others[:top]
    out.append(("everything else", sum(s for _, s in others[top:])))
    return out


def loss_full_logits(vlm: VLM, items: list[Item], feats: torch.Tensor) -> torch.Tensor:
    """The usual way: vocabulary logits at every position, then the loss on the labelled ones (the baseline)."""
    batch, embeds, mask = vlm.inputs(items, feats, with_target=True, left_pad=False)
    with autocast(vlm.device, vlm.bf16):
        logits = vlm.lm.model(inputs_embeds=embeds, attention_mask=mask).logits
    labels = batch.labels.to(vlm.device)
    return torch.nn.functional.cross_entropy(logits[:, :-1].float().flatten(0, 1), labels[:, 1:].flatten(),
                                             ignore_index=IGNORE)


def train_step(vlm: VLM, feats: torch.Tensor, items: list[Item], full_logits: bool = False):
    def step():
        vlm.connector.zero_grad(set_to_none=True)
        loss = loss_full_logits(vlm, items, feats) if full_logits else vlm.loss(items, feats)
        loss.backward()
    return step


def frozen_copy(lm, device: torch.device, bf16: bool):
    """A second copy of the frozen language model, prepared for `bf16` (the original is left as it is)."""
    twin = copy.copy(lm)
    twin.model = prepare_frozen(copy.deepcopy(lm.model), device, bf16)
    return twin


def generation(vlm: VLM, feats: torch.Tensor, batch: int, new_tokens: int):
    """Two ways to write exactly `new_tokens` greedy tokens for `batch` captions: with the KV cache, and by
    re-running the whole sequence for every token (the baseline)."""
    items = [Item(i, "Caption:", "") for i in range(batch)]
    _, embeds, mask = vlm.inputs(items, feats, with_target=False, left_pad=True)

    def cached():
        with torch.no_grad(), autocast(vlm.device, vlm.bf16):
            vlm.lm.model.generate(inputs_embeds=embeds, attention_mask=mask, max_new_tokens=new_tokens,
                                  min_new_tokens=new_tokens, do_sample=False, pad_token_id=vlm.tokens.pad,
                                  use_cache=True)

    def recompute():
        with autocast(vlm.device, vlm.bf16):
            greedy_recompute(vlm.lm.model, embeds, mask, new_tokens, eos=-1, pad=vlm.tokens.pad)
    return cached, recompute


def siglip_b16(layers: int):
    """A SigLIP-B/16-sized vision tower with random weights, through the same encoder interface."""
    from transformers import SiglipImageProcessor, SiglipVisionConfig, SiglipVisionModel

    from frozenbridge.core.backbones.vision import HFVision

    enc = HFVision.__new__(HFVision)
    torch.manual_seed(0)
    enc.model = SiglipVisionModel(SiglipVisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=layers,
                                                     num_attention_heads=12, image_size=224, patch_size=16)).eval()
    enc.model.requires_grad_(False)
    enc.is_clip, enc.features, enc.layer = False, "patches", None
    enc.image_size, enc.patch, enc.key = 224, (16, 16), "vision"
    enc.name, enc.revision = f"random SigLIP-B/16 ({layers} layers)", "random"
    enc.processor = SiglipImageProcessor(size={"height": 224, "width": 224})
    enc.probe_shape()
    return enc


QWEN25_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                  num_key_value_heads=2, vocab_size=151936, rope_theta=1e6, rms_norm_eps=1e-6,
                  max_position_embeddings=32768)  # Qwen/Qwen2.5-0.5B's config.json (tied embeddings below)
SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152, rope_theta=1e5,
                    rms_norm_eps=1e-5)  # the embedded language model's shape
TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=512)


def qwen_sized(sizes: dict, device: torch.device):
    """A Qwen2 language model (core.backbones.language.LanguageModel) of `sizes`, QWEN25_05B, SMOLLM2_135M (a Qwen2 of
    the embedded model's shape) or TINY, with random
    weights and the tests' BPE tokenizer."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from frozenbridge.core.backbones.language import LanguageModel
    from frozenbridge.testing.tiny_language import build_tokenizer

    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = build_tokenizer(Path(tmp))
    config = Qwen2Config(**{"max_position_embeddings": 4096, **sizes}, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen2ForCausalLM(config).eval()
    name = {id(QWEN25_05B): "random Qwen2.5-0.5B-sized", id(SMOLLM2_135M): "random SmolLM2-135M-sized"}.get(
        id(sizes), "random tiny Qwen2")
    return LanguageModel(name, "random", model, tokenizer)


def alternate(base, lever, reps: int) -> tuple[float, float]:
    """Median seconds of `base` and of `lever`, timed in turns after one warm call of each: a machine whose speed
    drifts moves both alike (on CUDA each call is timed until its kernels have finished)."""
    base(), lever()
    a, b = [], []
    for _ in range(reps):
        for fn, out in ((base, a), (lever, b)):
            start = time.perf_counter()
            fn()
            if torch.cuda.is_initialized():
                torch.cuda.synchronize()
            out.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def stepper(vlm, items, feats, loss_fn=None, optimizer=None):
    """One training step (zero_grad, loss, backward, optimizer step) with `loss_fn(vlm, items, feats)`."""
    optimizer = optimizer or torch.optim.AdamW(vlm.connector.parameters(), lr=1e-4)
    loss_fn = loss_fn or (lambda v, i, f: v.loss(i, f))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(vlm, items, feats)
        loss.backward()
        optimizer.step()
        return loss
    return step


def design_vlm(lm, device, bf16, feature_shape, setting: dict, seed: int = 0):
    """A VLM with the connector design `setting` (keys under shapes:, as comparison/settings.py's settings; {} =
    the MLP) over params.yaml.
    The codebook's centroids are random: a step's cost does not depend on where they lie."""
    from frozenbridge.bridge.design import design_class
    from frozenbridge.bridge.model import VLM, decoder_layers
    from frozenbridge.core.config import read_params_file
    from frozenbridge.shapes.sweeps.converge_settings import apply_overrides

    params = apply_overrides(read_params_file("params.yaml"), setting)
    c = params.shapes.connector
    centroids = None
    if c.design == "codebook":
        centroids = torch.randn(c.codebook.codes, c.codebook.merge ** 2 * feature_shape[-1])
    torch.manual_seed(seed)
    connector = design_class(c.design).from_params(c.knobs(), feature_shape, lm.width,
                                                   layers=len(decoder_layers(lm.model)), centroids=centroids).to(device)
    return VLM(lm, connector, device, bf16)
