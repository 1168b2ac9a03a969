"""Each training step the project takes beside its floor: the same step's matrix products alone.

    python -m frozenbridge.bench floor            # bench/floor-<machine>.json: every step, its floor and its operators
    python -m frozenbridge.bench floor --quick    # small batches, one repeat (the tests run it)

A step's floor is what it cannot go below on this machine: every matrix product the step runs (aten mm, addmm,
bmm, baddbmm and fused attention, forward and backward, recorded from one real step by a dispatch mode below
autograd), replayed alone at the same shapes, strides and dtypes on fresh random operands. The rest of the step,
step - floor, is everything else: norms, rotary, activations, casts, the loss, the optimizer, Python. The floor is
timed in turns with its step in the same process (step, floor, step, floor ...), so the ratio step / floor holds on
any machine whatever its speed, and drift moves both alike. Steps, all on the embedded backbones with stand-in
pictures through the real encoder, at the run's own sizes (16 pictures a caption batch, 5 pictures with 16 packed
questions a question batch):
- the stage-1 caption step and the packed question step of the MLP connector, eager, and with compiled decoder
  layers (as the shapes study and the audit run them on a CPU with a C++ compiler: train.compile auto);
- a caption step and a question step of each connector design of the comparison (the comparison's settings), eager;
- the one-token study's caption step (a pooled vector, its MLP, `onetoken.prefix_tokens` tokens after the prompt),
  eager as that study runs it, and with compiled layers (a lever it does not use yet).
Then torch.profiler's self time by operator: the caption step eager and compiled, the question step compiled; and
on a CPU, for the compiled steps, the kernel's share of their CPU time (the allocator's page faults).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from frozenbridge.bench.command_line import parser, run_and_save
from frozenbridge.bench.rows import row, value_row

aten = torch.ops.aten
MATMUL_OPS = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default,
              aten._scaled_dot_product_flash_attention_for_cpu.default,
              aten._scaled_dot_product_flash_attention.default, aten._scaled_dot_product_efficient_attention.default,
              aten._scaled_dot_product_cudnn_attention.default}


@dataclass(frozen=True)
class Call:
    """One recorded matrix product: the op and its arguments, tensors kept as (size, stride, dtype) only."""

    op: object
    args: tuple
    kwargs: dict


class MatmulRecorder(TorchDispatchMode):
    """Records every matrix product that runs under it (forward and backward alike: it sits below autograd)."""

    def __init__(self):
        super().__init__()
        self.calls: list[Call] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in MATMUL_OPS:
            spec = lambda x: ("tensor", tuple(x.shape), tuple(x.stride()), x.dtype, x.device) \
                if isinstance(x, torch.Tensor) else x  # noqa: E731
            self.calls.append(Call(func, tuple(spec(a) for a in args), {k: spec(v) for k, v in kwargs.items()}))
        return func(*args, **kwargs)


def record_matmuls(step) -> list[Call]:
    """The matrix products of one call of `step`."""
    with MatmulRecorder() as recorder:
        step()
    return recorder.calls


def _fresh(spec):
    if not (isinstance(spec, tuple) and spec and spec[0] == "tensor"):
        return spec
    _, size, stride, dtype, device = spec
    t = torch.empty_strided(size, stride, dtype=dtype, device=device)
    return t.normal_() if t.is_floating_point() else t.zero_()


def replay(calls: list[Call]):
    """A callable that runs the recorded products alone, each on operands of its own (random, never zeros: a product
    of zeros can run faster than one of real data), so no product reads another's inputs from a warm cache."""
    prepared = [(c.op, tuple(_fresh(a) for a in c.args), {k: _fresh(v) for k, v in c.kwargs.items()}) for c in calls]

    def run():
        for op, args, kwargs in prepared:
            op(*args, **kwargs)
    return run


def matmul_flops(calls: list[Call]) -> float:
    """FLOPs of the recorded mm/addmm/bmm/baddbmm products (attention kernels not counted)."""
    total = 0.0
    for c in calls:
        shapes = [a[1] for a in c.args if isinstance(a, tuple) and a and a[0] == "tensor"]
        if c.op in (aten.mm.default, aten.addmm.default):
            (m, k), (_, n) = shapes[-2], shapes[-1]
            total += 2 * m * k * n
        elif c.op in (aten.bmm.default, aten.baddbmm.default):
            (b, m, k), (_, _, n) = shapes[-2], shapes[-1]
            total += 2 * b * m * k * n
    return total


@dataclass
class Sizes:
    captions: int
    question_pictures: int
    questions: int
    reps: int
    peak: int


FULL = Sizes(captions=16, question_pictures=5, questions=16, reps=5, peak=2048)
QUICK = Sizes(captions=2, question_pictures=2, questions=4, reps=1, peak=256)


def measure_against_floor(name: str, step, reps: int, calls: list[Call] | None = None
                          ) -> tuple[list[dict], float, list[Call]]:
    """The step and its floor, timed in turns in this process: two rows, the step's seconds and its products.
    `calls`: the products recorded from the same step run eager, for a compiled step (torch.compile falls back to
    eager for good once a dispatch mode has run through it, so a compiled step is never recorded itself)."""
    from frozenbridge.bench.parts import alternate

    if calls is None:
        step()  # a model's first packed batch also runs its one-time packing check (VLM.packs): not recorded
        calls = record_matmuls(step)
    seconds, floor = alternate(step, replay(calls), reps)  # in turns: a machine whose speed drifts moves both alike
    flops = matmul_flops(calls)
    rows = [row(f"{name}: step / floor", "floor s", floor, "step s", seconds),
            row(f"{name}: its {len(calls)} matrix products", "GFLOP", flops / 1e9, "floor GFLOP/s", flops / floor / 1e9,
                ratio=False)]
    return rows, seconds, calls


def operator_rows(name: str, step, seconds: float, top: int = 10) -> list[dict]:
    """torch.profiler's self CPU time of one step by operator, as shares of the step: the largest `top` operators,
    then the rest together."""
    from frozenbridge.bench.parts import self_times

    times = self_times(step)
    rows = [row(f"  {name}, self time: {key[:40]}", "of the step", share, "s", share * seconds, ratio=share,
                fraction=True) for key, share in times[:top]]
    rest = sum(share for _, share in times[top:])
    rows.append(row(f"  {name}, self time: every other operator", "of the step", rest, "s", rest * seconds,
                    ratio=rest, fraction=True))
    return rows


def kernel_share_rows(name: str, step, reps: int) -> list[dict]:
    """The kernel's share of a step's CPU time, from the process's own accounting over `reps` steps: page faults of
    freshly allocated buffers and the allocator handing memory back show there, so it is the most a faster allocator
    could save. (How busy the threads are cannot be read the same way: a waiting OpenMP thread spins, and spinning
    counts as CPU time.) Unix only."""
    try:
        import resource
    except ImportError:  # Windows: no getrusage
        return []
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(reps):
        step()
    after = resource.getrusage(resource.RUSAGE_SELF)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    cpu = user + system
    return [row(f"  {name}: the kernel's share of its CPU time", "kernel s a step", system / reps,
                "CPU s a step", cpu / reps, ratio=system / cpu if cpu else None, fraction=True)]


def one_token_step(lm, device, bf16, batch: int):
    """The one-token study's training step at params.yaml's settings: `batch` pooled vectors (random, the embedded
    encoder's 1,280 numbers) through its MLP to `prefix_tokens` tokens after the prompt, then a caption."""
    from frozenbridge.bench.parts import CAPTION
    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.model import VLM
    from frozenbridge.bench.parts import stepper
    from frozenbridge.bridge.sequence import Interleaved
    from frozenbridge.onetoken.params import load_params

    o = load_params("params.yaml").onetoken
    torch.manual_seed(0)
    connector = MergedPatchMLP([1280], lm.width, hidden=o.hidden, prefix_tokens=o.prefix_tokens).to(device)
    items = [Interleaved((o.prompt, i), CAPTION) for i in range(batch)]
    return stepper(VLM(lm, connector, device, bf16), items, torch.randn(batch, 1, 1280))  # (pictures, 1, width)


def run(args) -> tuple[list[dict], dict]:
    from frozenbridge.bench.parts import caption_items, design_vlm, frozen_copy, pictures, question_rows, stepper
    from frozenbridge.core.backbones import load_vision
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.frozen import frozen_language
    from frozenbridge.core.measure import matmul_peak
    from frozenbridge.core.precision import compile_layers, describe
    from frozenbridge.comparison.settings import EQUAL_SETTINGS

    sizes = QUICK if args.quick else FULL
    device = pick_device(args.device)
    torch.manual_seed(0)
    lm, bf16 = frozen_language(args.language, device, args.precision)
    encoder = load_vision(args.vision, "patches", 10).to(device)
    feats = encoder.encode(pictures(max(sizes.captions, sizes.question_pictures)))
    shape = encoder.output_shape
    captions = caption_items(sizes.captions)
    questions = question_rows(sizes.question_pictures, sizes.questions)
    rows: list[dict] = []
    peak = matmul_peak(device, torch.bfloat16 if bf16 else torch.float32, sizes.peak, sizes.reps)
    rows.append(value_row(f"{'bf16' if bf16 else 'fp32'} matmul peak ({sizes.peak}³ and its neighbours)", peak / 1e9,
                          "GFLOP/s"))

    mlp = design_vlm(lm, device, bf16, shape, {})
    caption_name = f"caption step, MLP, {sizes.captions} pictures"
    got, caption_seconds, caption_calls = measure_against_floor(f"{caption_name}, eager",
                                                                stepper(mlp, captions, feats), sizes.reps)
    rows += got
    question_name = f"question step, MLP, {sizes.questions} questions on {sizes.question_pictures} pictures"
    got, _, question_calls = measure_against_floor(f"{question_name}, eager", stepper(mlp, questions, feats),
                                                   sizes.reps)
    rows += got
    one_token = one_token_step(lm, device, bf16, sizes.captions)
    got, _, one_token_calls = measure_against_floor("one-token caption step, eager", one_token, sizes.reps)
    rows += got
    compiled_ops = []
    if not args.no_compile:
        twin = frozen_copy(lm, device, bf16)
        compile_layers(twin.model)
        compiled = design_vlm(twin, device, bf16, shape, {})
        for name, step, calls, profile in (
                (f"{caption_name}, compiled layers", stepper(compiled, captions, feats), caption_calls,
                 "caption step, compiled"),
                (f"{question_name}, compiled layers", stepper(compiled, questions, feats), question_calls,
                 "question step, compiled"),
                ("one-token caption step, compiled layers", one_token_step(twin, device, bf16, sizes.captions),
                 one_token_calls, None)):
            step()  # compiles (or loads from inductor's cache)
            timed, seconds, _ = measure_against_floor(name, step, sizes.reps, calls=calls)
            rows += timed
            if profile:
                compiled_ops += operator_rows(profile, step, seconds)
                if device.type == "cpu":
                    compiled_ops += kernel_share_rows(profile, step, sizes.reps)
    for setting, values in ({} if args.quick else EQUAL_SETTINGS).items():
        vlm = design_vlm(lm, device, bf16, shape, values)
        for phase, items in (("caption", captions), ("question", questions)):
            rows += measure_against_floor(f"{phase} step, {setting}, eager", stepper(vlm, items, feats),
                                          sizes.reps)[0]
    rows += operator_rows("caption step", stepper(mlp, captions, feats), caption_seconds)
    rows += compiled_ops
    return rows, {"precision": describe(bf16)}


def main(argv: list[str] | None = None) -> None:
    ap = parser("floor", __doc__, "bench/floor-cpu-2core.json")
    ap.add_argument("--quick", action="store_true", help="small batches, one repeat, no designs (the tests run it)")
    ap.add_argument("--no-compile", action="store_true", help="leave out the compiled steps")
    ap.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"], help="as shapes.train.precision")
    args = ap.parse_args(argv)
    run_and_save("floor", args, run, "quick" if args.quick else "full")


if __name__ == "__main__":
    main()
