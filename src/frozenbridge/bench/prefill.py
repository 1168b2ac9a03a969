"""Evaluation with a picture's prefill shared by its questions, measured against the evaluation as it runs.

    python -m frozenbridge.bench prefill                 # bench/prefill-cpu-2core.json (needs runs/shapes/qa/0)
    python -m frozenbridge.bench prefill --recipe caption_qa --repeats 1

The evaluation gives every (picture, question) a prefill of its own: [bos] "Image:" <image tokens> "\\nQuestion: ...
Answer:". The picture's part is the same for each of its questions. Shared, it runs once a picture (batched over the
pictures), and each question's generation starts from a copy of the picture's keys and values; questions of one
token length share a batch, so nothing is padded. The lever may replace the evaluation only where it gives exactly
the evaluation's answers, so the tool counts the answers that differ, in the run's precision and in fp32, beside
the answers that differ when only the evaluation's batch size changes (how far the evaluation itself moves with the
shape of its batches). Both test sets' one-word answers, every condition with a picture; the no-picture prompts
have no picture to share and are left out of both sides.
"""

from __future__ import annotations

import argparse
import statistics
import time
from itertools import groupby
from pathlib import Path

import torch

from frozenbridge.bench.rows import machine_info, row, save_rows

DEFAULT_OUT = Path("bench/prefill-cpu-2core.json")


@torch.no_grad()
def shared_prefill(vlm, keys: list[tuple[int, str]], feats: torch.Tensor, batch_size: int,
                   max_new: int) -> dict[tuple[int, str], str]:
    """The answer to every (picture row, prompt), each picture's prefix run once."""
    from transformers import DynamicCache
    from transformers.modeling_outputs import CausalLMOutputWithPast

    from frozenbridge.bridge.greedy import strip_after_eos
    from frozenbridge.bridge.sequence import IMAGE_LABEL, Interleaved, Item
    from frozenbridge.core.precision import autocast

    model, tokens = vlm.lm.model, vlm.tokens
    # the cache's name in model outputs and in `generate` (transformers 5.x renamed past_key_values)
    cache_name = "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"
    pictures = sorted({picture for picture, _ in keys})
    slot = {picture: i for i, picture in enumerate(pictures)}
    parts = []  # per batch of pictures, per layer: (keys, values) of the picture's prefix
    for i in range(0, len(pictures), batch_size):
        prefixes = [Interleaved((IMAGE_LABEL, p), "") for p in pictures[i:i + batch_size]]
        _, embeds, mask = vlm.inputs(prefixes, feats, with_target=False, left_pad=True)
        with autocast(vlm.device, vlm.bf16):
            cache = getattr(model(inputs_embeds=embeds, attention_mask=mask, use_cache=True), cache_name)
        parts.append([(layer.keys, layer.values) for layer in cache.layers])
    prefix = [(torch.cat([p[j][0] for p in parts]), torch.cat([p[j][1] for p in parts])) for j in range(len(parts[0]))]
    answers: dict[tuple[int, str], str] = {}
    by_length = sorted(set(keys), key=lambda k: (len(tokens.ids(k[1])), k[1], k[0]))
    for _, same in groupby(by_length, key=lambda k: len(tokens.ids(k[1]))):
        same = list(same)
        for i in range(0, len(same), batch_size):
            chunk = same[i:i + batch_size]
            rows = torch.tensor([slot[picture] for picture, _ in chunk], device=vlm.device)
            cache = DynamicCache(ddp_cache_data=[(k[rows], v[rows]) for k, v in prefix], config=model.config)
            _, embeds, mask = vlm.inputs([Item(p, q, "") for p, q in chunk], feats, with_target=False, left_pad=True)
            with autocast(vlm.device, vlm.bf16):
                out = model.generate(inputs_embeds=embeds, attention_mask=mask, **{cache_name: cache},
                                     max_new_tokens=max_new, do_sample=False, eos_token_id=tokens.eos,
                                     pad_token_id=tokens.pad, use_cache=True)
            ids = strip_after_eos(out.cpu(), tokens.eos, tokens.pad)
            said = vlm.lm.tokenizer.batch_decode(ids, skip_special_tokens=True)
            answers.update(zip(chunk, (s.strip() for s in said), strict=True))
    return answers


def answer_keys(data, blank_row: int, n: int, name: str) -> list[tuple[int, str]]:
    """The (picture row, prompt) of every one-word answer the evaluation generates with a picture."""
    from frozenbridge.core.controls import CONDITIONS, shown
    from frozenbridge.shapes.evaluation.scoring import eval_items

    return [(shown(item, cond, blank_row), item.prompt)
            for task, rows in eval_items(data, n, name).items() if task != "caption"
            for item in rows for cond in CONDITIONS if cond != "none"]


def measure(recipe: str, replicate: int, repeats: int) -> tuple[list[dict], str, torch.device]:
    from frozenbridge.bridge.model import fp32_for_a_while
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.shapes.data.vocab import TEST_SPLITS
    from frozenbridge.bridge.ask import generate_once
    from frozenbridge.shapes.params import load_params
    from frozenbridge.shapes.paths import FEATURES, PICTURES, RUNS, model_dir
    from frozenbridge.shapes.training.split_data import load_blank, load_split
    from frozenbridge.shapes.training.start import setup

    params = load_params("params.yaml")
    cfg = params.shapes.evaluate
    model = model_dir(RUNS, recipe, replicate)
    if not (model / "run.json").is_file():
        raise SystemExit(f"{model}: no trained run; run `dvc repro shapes_evaluate@{recipe}-{replicate}` first")
    device, bf16, lm = setup(params)
    vlm = load_run(model, device, bf16, lm).model
    blank = load_blank(FEATURES, params.vision)
    sets = []
    for name, split in TEST_SPLITS.items():
        data = load_split(split, PICTURES, FEATURES, params.vision)
        sets.append((torch.cat([data.feats, blank.to(data.feats.dtype)]),
                     answer_keys(data, len(data.feats), cfg.items, name)))

    def evaluation(size: int = cfg.batch_size) -> dict:
        return {(i, k): a for i, (feats, keys) in enumerate(sets) for k, a in
                generate_once(vlm, keys, feats, size, cfg.answer_tokens, "evaluation").items()}

    def shared() -> dict:
        return {(i, k): a for i, (feats, keys) in enumerate(sets)
                for k, a in shared_prefill(vlm, keys, feats, cfg.batch_size, cfg.answer_tokens).items()}

    times: dict[str, list[float]] = {"evaluation": [], "shared": []}
    answers: dict[str, dict] = {}
    for _ in range(repeats):  # alternated, so a busy moment falls on both sides
        for side, fn in (("evaluation", evaluation), ("shared", shared)):
            start = time.perf_counter()
            answers[side] = fn()
            times[side].append(time.perf_counter() - start)
    smaller = evaluation(max(1, cfg.batch_size // 2))
    vlm.bf16 = False
    with fp32_for_a_while(vlm.lm.model):
        fp32_evaluation, fp32_shared = evaluation(), shared()
    vlm.bf16 = bf16

    def differ(a: dict, b: dict) -> int:
        return sum(a[k] != b[k] for k in a)

    n, unlike = len(answers["evaluation"]), differ(answers["evaluation"], answers["shared"])
    precision = "bf16" if bf16 else "fp32"
    adopt = unlike == 0 and differ(fp32_evaluation, fp32_shared) == 0
    decision = "exactly equal: adopt" if adopt else "not exactly equal: the evaluation keeps its own prefills"
    a, b = statistics.median(times["shared"]), statistics.median(times["evaluation"])
    rows = [
        row(f"answers of both test sets ({recipe} run {replicate}, {n} with a picture): picture prefill shared",
            "shared s", a, "a prefill each s", b),
        row(f"answers unlike the evaluation's, {precision} ({decision})", "shared prefill", unlike,
            f"batch size {max(1, cfg.batch_size // 2)} not {cfg.batch_size}", differ(answers["evaluation"], smaller),
            ratio=False),
        row("answers unlike the evaluation's, fp32", "shared prefill", differ(fp32_evaluation, fp32_shared), "of", n,
            ratio=False),
    ]
    return rows, f"{recipe} run {replicate}, median of {repeats} alternated timings", device


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.bench prefill", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", default="qa", help="the trained run's recipe (default qa)")
    ap.add_argument("--replicate", type=int, default=0, help="its replicate (default 0)")
    ap.add_argument("--repeats", type=int, default=3, help="timings of each side, alternated (default 3)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the rows go (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        raise SystemExit(f"--repeats = {args.repeats}: at least 1")
    rows, mode, device = measure(args.recipe, args.replicate, args.repeats)
    save_rows(args.out, rows, machine_info(device, mode, "python -m frozenbridge.bench prefill"))
