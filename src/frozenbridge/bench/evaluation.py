"""Evaluation's greedy decoding by batch size and cache, against the batch the pipeline evaluates at.

    python -m frozenbridge.bench evaluation            # bench/evaluation-cpu-2core.json
    python -m frozenbridge.bench evaluation --quick    # small sizes, one repeat

Every shapes evaluation writes captions (up to shapes.evaluate.caption_tokens new tokens) and short answers (up to
answer_tokens) for a few hundred prompts, shapes.evaluate.batch_size at a time, with transformers' dynamic KV cache.
This times the same decoding on the embedded backbones with stand-in pictures, each batch writing exactly that many
tokens (so a random connector's early end-of-text does not shorten it): seconds a prompt at the pipeline's batch and
at larger ones, with the dynamic cache and with the static cache. Rows: seconds a prompt at batch B against the
pipeline's batch (above 1: B is faster a prompt).
"""

from __future__ import annotations

import sys

import torch

from frozenbridge.bench.command_line import parser, run_and_save
from frozenbridge.bench.rows import row


def run(args) -> list[dict]:
    from frozenbridge.bench.launch_light import static_generation
    from frozenbridge.bench.parts import design_vlm, generation, pictures
    from frozenbridge.core.backbones import load_vision
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.frozen import frozen_language
    from frozenbridge.core.measure import timed
    from frozenbridge.shapes.params import load_params

    evaluate = load_params("params.yaml").shapes.evaluate
    base = evaluate.batch_size
    batches = (2, 4) if args.quick else (base, 2 * base, 4 * base)
    base = batches[0]
    reps = 1 if args.quick else args.reps
    device = pick_device(args.device)
    torch.manual_seed(0)
    lm, bf16 = frozen_language(args.language, device, "auto")
    encoder = load_vision(args.vision, "patches", 10).to(device)
    feats = encoder.encode(pictures(max(batches)))
    vlm = design_vlm(lm, device, bf16, encoder.output_shape, {})
    rows: list[dict] = []
    for what, tokens in (("caption_tokens", 4 if args.quick else evaluate.caption_tokens),
                         ("answer_tokens", 2 if args.quick else evaluate.answer_tokens)):
        per_prompt = {}
        for batch in batches:
            cached, _ = generation(vlm, feats, batch, tokens)
            per_prompt[batch, "dynamic"] = timed(cached, reps) / batch
            try:
                per_prompt[batch, "static"] = timed(static_generation(vlm, feats, batch, tokens), reps) / batch
            except Exception as err:  # noqa: BLE001 - a row left out, said in one line
                print(f"{tokens} new tokens, batch {batch}, static cache: not measured ({type(err).__name__})",
                      file=sys.stderr)
        for (batch, cache), seconds in per_prompt.items():
            if (batch, cache) == (base, "dynamic"):
                continue
            rows.append(row(f"{tokens} new tokens ({what}): batch {batch}, {cache} KV cache, seconds a prompt",
                            "s", seconds, f"batch {base}, dynamic s", per_prompt[base, "dynamic"]))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = parser("evaluation", __doc__, "bench/evaluation-cpu-2core.json")
    ap.add_argument("--quick", action="store_true", help="small batches and few tokens, one repeat")
    ap.add_argument("--reps", type=int, default=3, help="timed calls of each (default 3)")
    args = ap.parse_args(argv)
    run_and_save("evaluation", args, lambda a: (run(a), {}), "quick" if args.quick else f"full, {args.reps} calls each")


if __name__ == "__main__":
    main()
