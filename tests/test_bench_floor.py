"""The floor benchmark's parts (recording and replaying a step's matrix products) and the step levers' target
cross-entropy, on small modules; then each command's quick mode on tiny models, for a complete table."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from frozenbridge.bench.floor import matmul_flops, record_matmuls, replay
from frozenbridge.bench.step_levers import CHUNK, TargetCrossEntropy


def test_a_linear_steps_products_are_recorded_forward_and_backward_with_their_flops():
    torch.manual_seed(0)
    layer = nn.Linear(8, 6, bias=False)
    x = torch.randn(5, 8, requires_grad=True)

    def step():
        layer(x).square().sum().backward()
    calls = record_matmuls(step)
    # forward x @ W.T, then the input gradient (5x6 @ 6x8) and the weight gradient (6x5 @ 5x8)
    assert len(calls) == 3
    assert matmul_flops(calls) == 3 * 2 * 5 * 8 * 6
    run = replay(calls)
    run()  # runs alone, on operands of its own


def test_replayed_operands_keep_the_recorded_strides_and_are_not_zeros():
    a = torch.randn(4, 3)
    b = torch.randn(2, 3).T  # a transposed view, as nn.Linear hands its weight to mm
    calls = record_matmuls(lambda: a @ b)
    (call,) = calls
    assert call.args[1][2] == b.stride()
    from frozenbridge.bench.floor import _fresh

    fresh = _fresh(call.args[1])
    assert fresh.stride() == b.stride() and fresh.abs().sum() > 0


@pytest.mark.parametrize("rows", [3, CHUNK + 5])
def test_target_cross_entropy_gives_the_loss_and_gradient_of_cross_entropy_over_the_logits(rows):
    torch.manual_seed(1)
    weight = torch.randn(50, 16)
    hidden = torch.randn(rows, 16, requires_grad=True)
    labels = torch.randint(0, 50, (rows,))
    expected = nn.functional.cross_entropy(hidden @ weight.T, labels)
    (expected_grad,) = torch.autograd.grad(expected, hidden)
    loss = TargetCrossEntropy.apply(hidden, weight, labels)
    (grad,) = torch.autograd.grad(loss * 3, hidden)
    assert torch.allclose(loss, expected, rtol=1e-6)
    assert torch.allclose(grad, 3 * expected_grad, rtol=1e-5, atol=1e-7)
    assert not torch.allclose(grad, 2 * expected_grad, rtol=1e-5, atol=1e-7)  # the outer gradient is applied


def test_target_cross_entropy_in_bf16_rounds_as_autocast_does():
    """bf16 logits from a bf16 product, an fp32 loss, the logits' gradient rounded to bf16 before the product:
    the same numbers as today's autocast path, up to rounding order."""
    torch.manual_seed(2)
    weight = torch.randn(300, 32).to(torch.bfloat16)
    hidden = torch.randn(20, 32, requires_grad=True)
    labels = torch.randint(0, 300, (20,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = hidden @ weight.T
    expected = nn.functional.cross_entropy(logits.float(), labels)
    (expected_grad,) = torch.autograd.grad(expected, hidden)
    loss = TargetCrossEntropy.apply(hidden.to(torch.bfloat16), weight, labels)
    (grad,) = torch.autograd.grad(loss, hidden)
    assert abs(float(loss) - float(expected)) < 1e-5 * float(expected)
    assert float((grad - expected_grad).norm() / expected_grad.norm()) < 1e-2


def _quick(name: str, tmp_path, *extra):
    out = tmp_path / f"{name}.json"
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.bench", name, "--quick", "--out", str(out), *extra],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, json.loads(out.read_text())


def test_floor_quick_prints_step_over_floor_for_caption_and_question_steps(tmp_path):
    from frozenbridge.testing.tiny_language import build_qwen2

    build_qwen2(tmp_path / "lm")  # a tiny language model: the rows, not the speeds, are what is checked
    proc, saved = _quick("floor", tmp_path, "--no-compile", "--language", str(tmp_path / "lm"))
    measures = [r["measure"] for r in saved["rows"]]
    for name in ("matmul peak", "caption step, MLP", "question step, MLP", "one-token caption step",
                 "caption step, self time"):
        assert any(name in m for m in measures), f"missing row: {name}"
    ratios = [r for r in saved["rows"] if r["measure"].endswith("step / floor")]
    assert len(ratios) == 3
    for r in ratios:
        assert r["ratio"] == pytest.approx(r["b_value"] / r["a_value"]) and r["a_value"] > 0
        assert r["measure"] in proc.stdout
    shares = [r["ratio"] for r in saved["rows"] if "caption step, self time" in r["measure"]]
    assert sum(shares) == pytest.approx(1.0, abs=1e-6)  # the operators and the rest make the whole step
    assert saved["machine"]["tool"] == "python -m frozenbridge.bench floor"


def test_the_levers_loss_without_a_lever_is_the_models_loss_and_target_cross_entropy_keeps_it():
    """On a tiny fp32 model: step_levers' copy of the loss with no lever is VLM.loss exactly, and with the target
    cross-entropy it gives the same loss and connector gradient up to rounding."""
    from frozenbridge.bench.parts import TINY, caption_items, qwen_sized
    from frozenbridge.bench.step_levers import Lever, lever_loss
    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.model import VLM

    device = torch.device("cpu")
    lm = qwen_sized(TINY, device)
    torch.manual_seed(3)
    vlm = VLM(lm, MergedPatchMLP([4, 4, 8], lm.width, merge=2), device, bf16=False)
    feats, items = torch.randn(3, 16, 8), caption_items(3)

    def loss_and_grad(fn):
        vlm.connector.zero_grad(set_to_none=True)
        loss = fn(vlm, items, feats)
        loss.backward()
        return float(loss), torch.cat([p.grad.flatten() for p in vlm.connector.parameters()])
    base = loss_and_grad(lambda v, i, f: v.loss(i, f))
    same = loss_and_grad(lambda v, i, f: lever_loss(v, i, f, Lever()))
    fused = loss_and_grad(lambda v, i, f: lever_loss(v, i, f, Lever(target_ce=True)))
    assert same[0] == base[0] and torch.equal(same[1], base[1])
    assert fused[0] == pytest.approx(base[0], rel=1e-6)
    assert torch.allclose(fused[1], base[1], rtol=1e-4, atol=1e-7) and base[1].abs().sum() > 0


def test_a_step_given_its_products_is_timed_against_them_without_being_recorded(monkeypatch):
    """A compiled step is timed against the products of the same step run eager: a dispatch mode through compiled
    code leaves it eager for good, so the floor benchmark must never record it."""
    import frozenbridge.bench.floor as floor

    a, b = torch.randn(8, 8), torch.randn(8, 8)
    calls = record_matmuls(lambda: a @ b)
    monkeypatch.setattr(floor, "record_matmuls", lambda step: pytest.fail("the step was recorded"))
    rows, seconds, used = floor.measure_against_floor("step", lambda: a @ b @ b, reps=1, calls=calls)
    assert used is calls and seconds > 0 and rows[0]["measure"] == "step: step / floor"
    assert rows[1]["a_value"] == pytest.approx(2 * 8 ** 3 / 1e9)  # one recorded product's GFLOP, not the step's two


def test_the_kernels_share_is_the_kernels_cpu_seconds_over_all_and_grows_with_page_faults():
    """A step that writes fresh pages (each first touch a page fault, served by the kernel) shows a larger kernel
    share than one that only multiplies in place."""
    import mmap

    from frozenbridge.bench.floor import kernel_share_rows

    a = torch.randn(256, 256)

    def multiply():
        for _ in range(40):
            a @ a

    def fault():
        for _ in range(20):
            m = mmap.mmap(-1, 16 << 20)  # fresh anonymous memory: every page's first write faults
            for offset in range(0, len(m), 4096):
                m[offset] = 1
            m.close()
    (busy,), (faulting,) = kernel_share_rows("mm", multiply, reps=3), kernel_share_rows("faults", fault, reps=3)
    assert busy["measure"] == "  mm: the kernel's share of its CPU time"
    for r in (busy, faulting):
        assert r["ratio"] == pytest.approx(r["a_value"] / r["b_value"])
    assert faulting["ratio"] > 0.2 > busy["ratio"]
