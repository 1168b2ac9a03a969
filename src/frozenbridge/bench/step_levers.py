"""The training step's levers, each timed against the step as the pipeline takes it, in one process.

    python -m frozenbridge.bench step_levers            # bench/step-levers-<machine>.json
    python -m frozenbridge.bench step_levers --quick    # small batches, one repeat (the tests run it)

Each lever is timed alternately with the current step (base, lever, base, lever ...: a machine whose speed drifts
moves both alike) and kept as a row whether it helps or not: base seconds, lever seconds, and base / lever (above 1:
the lever is faster). Beside each, what it changes in the numbers: the loss and the connector's gradient on the
same batch against the current step's (a lever that only reorders bf16 rounding moves them by about 1e-3 of their
size; one that changes the arithmetic moves them more). The levers; the pipeline took one of them, the caption
step's compiled layers (train.compile auto compiles every shapes and audit training step on a CPU with a C++
compiler), and none of the others:
- target cross-entropy: the output layer and the loss at the scored positions in one autograd function, the
  gradient towards the hidden state computed in the forward in chunks of rows (no fp32 copy of the logits kept, no
  log-softmax backward): the same arithmetic as today's, ordered otherwise;
- bf16 residual stream: the frozen model run in bf16 without autocast (its inputs cast once, not before each linear);
- SDPA attention: the frozen model's attention through torch's fused kernel instead of the eager matmul path;
- compiled layers for the caption step, timed against the eager step;
- the whole loss compiled (decoder, output layer and loss in one torch.compile graph, shapes dynamic);
- fused and foreach AdamW against the single-tensor loop (the optimizer step alone);
- batch 32 against 16 (seconds a picture: more rows a matmul);
- one thread against the machine's threads.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import torch
from torch import nn

from frozenbridge.bench.command_line import parser, run_and_save
from frozenbridge.bench.parts import alternate, stepper
from frozenbridge.bench.rows import row

CHUNK = 64  # rows of the target cross-entropy at a time: 64 x 49,152 fp32 logits = 12.6 MB


class TargetCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of `hidden @ weight.T` against `labels`, with the gradient towards `hidden` computed in
    the forward (the frozen `weight` takes none), `CHUNK` rows at a time. The logits are made in the weight's
    dtype, as autocast makes them, and the loss in fp32 as today's `cross_entropy(logits.float(), labels)`; the
    gradient of each logit, (softmax - one-hot) / rows, is rounded to the weight's dtype before it meets the weight,
    as autograd rounds it today."""

    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor):
        n = hidden.shape[0]
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad = torch.empty_like(hidden)
        for start in range(0, n, CHUNK):
            h, y = hidden[start:start + CHUNK], labels[start:start + CHUNK]
            logits = (h @ weight.T).float()
            logp = torch.log_softmax(logits, dim=-1)
            total -= logp.gather(1, y[:, None]).sum()
            g = logp.exp_().div_(n)
            g.scatter_add_(1, y[:, None], torch.full((len(y), 1), -1.0 / n, device=g.device))
            grad[start:start + CHUNK] = g.to(weight.dtype) @ weight
        ctx.save_for_backward(grad)
        return total / n

    @staticmethod
    def backward(ctx, grad_out):
        (grad,) = ctx.saved_tensors
        return grad * grad_out.to(grad.dtype), None, None


@dataclass(frozen=True)
class Lever:
    bf16_stream: bool = False
    target_ce: bool = False


def lever_loss(vlm, items: list, feats: torch.Tensor, lever: Lever) -> torch.Tensor:
    """bridge.model.VLM._loss with the lever's changes (packed rows run packed where the model allows, as there)."""
    from frozenbridge.bridge.sequence import IGNORE, Packed, unpack
    from frozenbridge.core.precision import autocast

    if any(isinstance(item, Packed) for item in items) and not vlm.packs(items, feats):
        items = unpack(items)
    batch, embeds, mask = vlm.inputs(items, feats, with_target=True, left_pad=False)
    model, extra = vlm.lm.model, {}
    if batch.segments is not None:
        mask, extra = vlm.packed_mask(batch), {"position_ids": batch.positions.to(vlm.device)}
    cast = contextlib.nullcontext() if lever.bf16_stream else autocast(vlm.device, vlm.bf16)
    if lever.bf16_stream and vlm.bf16:
        embeds = embeds.to(torch.bfloat16)
    with cast, vlm.reading(batch, feats):
        hidden = model.get_decoder()(inputs_embeds=embeds, attention_mask=mask, use_cache=False,
                                     **extra).last_hidden_state
    labels = batch.labels[:, 1:].to(vlm.device)
    where = labels != IGNORE
    picked = hidden[:, :-1][where]
    weight = model.get_output_embeddings().weight
    if lever.target_ce:
        return TargetCrossEntropy.apply(picked.to(weight.dtype), weight, labels[where])
    from frozenbridge.core.backbones.language import output_logits

    with cast:
        logits = output_logits(model, picked)
    return nn.functional.cross_entropy(logits.float(), labels[where])


def numbers_moved(vlm, items, feats, loss_fn) -> tuple[float, float]:
    """(|loss difference| / loss, |gradient difference| / |gradient|) of `loss_fn` against the current loss, on
    one batch from the same connector (no optimizer step between)."""
    def loss_and_grad(fn):
        vlm.connector.zero_grad(set_to_none=True)
        loss = fn(vlm, items, feats)
        loss.backward()
        grad = torch.cat([p.grad.flatten() for p in vlm.connector.parameters() if p.grad is not None])
        return float(loss), grad
    base_loss, base_grad = loss_and_grad(lambda v, i, f: v.loss(i, f))
    loss, grad = loss_and_grad(loss_fn)
    vlm.connector.zero_grad(set_to_none=True)
    return abs(loss - base_loss) / abs(base_loss), float((grad - base_grad).norm() / base_grad.norm())


def lever_row(rows, name, base_s, lever_s, moved=None):
    rows.append(row(name, "lever s", lever_s, "current s", base_s))
    if moved is not None:
        rows.append(row(f"  {name}: numbers against the current step", "loss, relative", moved[0],
                        "gradient, relative", moved[1], ratio=False))


@contextlib.contextmanager
def attention(model, implementation: str):
    before = model.config._attn_implementation
    model.set_attn_implementation(implementation)
    try:
        yield
    finally:
        model.set_attn_implementation(before)


def run(args) -> list[dict]:
    from frozenbridge.bench.parts import caption_items, design_vlm, frozen_copy, pictures, question_rows
    from frozenbridge.core.backbones import load_vision
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.frozen import frozen_language
    from frozenbridge.core.precision import compile_layers

    quick = args.quick
    reps = 1 if quick else args.reps
    n_captions, n_pictures, n_questions = (2, 2, 4) if quick else (16, 5, 16)
    device = pick_device(args.device)
    torch.manual_seed(0)
    lm, bf16 = frozen_language(args.language, device, "auto")
    encoder = load_vision(args.vision, "patches", 10).to(device)
    feats = encoder.encode(pictures(2 * n_captions))
    shape = encoder.output_shape
    captions, questions = caption_items(n_captions), question_rows(n_pictures, n_questions)
    vlm = design_vlm(lm, device, bf16, shape, {})
    rows: list[dict] = []
    for phase, items in (("caption step", captions), ("question step, eager", questions)):
        base = stepper(vlm, items, feats)
        for name, lever in (("target cross-entropy", Lever(target_ce=True)),
                            ("bf16 residual stream", Lever(bf16_stream=True)),
                            ("bf16 residual stream + target cross-entropy", Lever(True, True))):
            loss_fn = lambda v, i, f, lever=lever: lever_loss(v, i, f, lever)  # noqa: E731
            lever_row(rows, f"{phase}: {name}", *alternate(base, stepper(vlm, items, feats, loss_fn), reps),
                      numbers_moved(vlm, items, feats, loss_fn))
        if device.type == "cpu" and hasattr(lm.model, "set_attn_implementation"):
            def sdpa_step(step=stepper(vlm, items, feats)):
                with attention(lm.model, "sdpa"):
                    return step()

            def sdpa_loss(v, i, f):
                with attention(lm.model, "sdpa"):
                    return v.loss(i, f)
            lever_row(rows, f"{phase}: SDPA attention", *alternate(base, sdpa_step, reps),
                      numbers_moved(vlm, items, feats, sdpa_loss))

    # compiled layers for the caption step; the whole loss compiled
    twin = frozen_copy(lm, device, bf16)
    compile_layers(twin.model)
    compiled = design_vlm(twin, device, bf16, shape, {})
    compiled.connector.load_state_dict(vlm.connector.state_dict())
    base = stepper(vlm, captions, feats)
    step = stepper(compiled, captions, feats)
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    lever_row(rows, "caption step: compiled decoder layers", *alternate(base, step, reps))
    rows.append(row("  caption step: compiled decoder layers, first step (compiling)", "s", first, "current step s",
                    rows[-1]["b_value"], ratio=False))
    if not args.no_whole_compile:
        whole = design_vlm(frozen_copy(lm, device, bf16), device, bf16, shape, {})
        whole.connector.load_state_dict(vlm.connector.state_dict())
        core = torch.compile(lambda v, i, f: lever_loss(v, i, f, Lever()), dynamic=True)
        step = stepper(whole, captions, feats, core)
        start = time.perf_counter()
        step()
        first = time.perf_counter() - start
        lever_row(rows, "caption step: the whole loss compiled", *alternate(base, step, reps))
        rows.append(row("  caption step: the whole loss compiled, first step (compiling)", "s", first,
                        "current step s", rows[-1]["b_value"], ratio=False))

    # the optimizer step alone
    step = stepper(vlm, captions, feats)
    step()
    params = list(vlm.connector.parameters())
    for name, kwargs in (("fused", {"fused": True}), ("foreach", {"foreach": True})):
        single = torch.optim.AdamW(params, lr=1e-4, foreach=False)
        other = torch.optim.AdamW(params, lr=1e-4, **kwargs)
        lever_row(rows, f"optimizer step alone: {name} AdamW against single-tensor",
                  *alternate(single.step, other.step, max(reps, 5)))

    # more rows a matmul: seconds a picture at twice the batch
    double = caption_items(2 * n_captions)
    base_s, lever_s = alternate(base, stepper(vlm, double, feats), reps)
    rows.append(row(f"caption step: batch {2 * n_captions} against {n_captions}, seconds a picture", "lever s",
                    lever_s / (2 * n_captions), "current s", base_s / n_captions))

    # threads
    threads = torch.get_num_threads()
    if threads > 1:
        def one_thread():
            torch.set_num_threads(1)
            try:
                base()
            finally:
                torch.set_num_threads(threads)
        lever_row(rows, f"caption step: 1 thread against {threads}", *alternate(base, one_thread, reps))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = parser("step_levers", __doc__, "bench/step-levers-cpu-2core.json")
    ap.add_argument("--quick", action="store_true", help="small batches, one repeat (the tests run it)")
    ap.add_argument("--reps", type=int, default=5, help="timed steps of each side (default 5)")
    ap.add_argument("--no-whole-compile", action="store_true", help="leave out the whole loss compiled (slow to build)")
    args = ap.parse_args(argv)
    run_and_save("step_levers", args, lambda a: (run(a), {}),
                 "quick" if args.quick else f"full, {args.reps} steps a side")


if __name__ == "__main__":
    main()
