"""The benchmark's quick mode prints a complete table (speeds are measured, never asserted here)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys


def test_quick_benchmark_table_is_complete(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.tools.bench", "--quick", "--json", str(out)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = json.loads(out.read_text())
    rows = saved["rows"]
    assert saved["machine"]["mode"] == "quick" and saved["machine"]["device"]
    measures = [r["measure"] for r in rows]
    expected = ["generation", "logits", "precision", "bf16 weights", "matmul throughput", "embedded encoder",
                "SigLIP-B/16-sized encoder",
                "1 image tokens", "16 image tokens", "49 image tokens", "196 image tokens", "encode"]
    for name in expected:
        assert any(name in m for m in measures), f"missing row: {name}"
    assert sum(m.startswith("batch ") for m in measures) >= 2
    for r in rows:
        assert r["a_value"] > 0 and r["b_value"] > 0 and math.isfinite(r["a_value"])
        assert r["ratio"] is None or r["ratio"] > 0
        assert r["measure"] in proc.stdout


def test_gpu_figures_script_runs_at_toy_sizes(tmp_path):
    """The script meant for a GPU runs its whole path anywhere with --tiny (speeds are not checked)."""
    out = tmp_path / "gpu.json"
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.tools.bench_gpu", "--tiny", "--json", str(out)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    measures = " | ".join(r["measure"] for r in rows)
    for name in ("train step", "bf16", "fp32", "memory", "KV cache", "recompute", "encode"):
        assert name in measures
    assert all(r["value"] > 0 and math.isfinite(r["value"]) for r in rows)


def test_step_flops_count_matmuls_forward_and_backward():
    """The throughput row's numerator: matmul FLOPs from the shapes, input gradients included, frozen weights not."""
    import torch

    from frozenbridge.tools.bench import step_flops

    w = torch.randn(6, 5)  # frozen: no weight gradient is computed
    x = torch.randn(4, 5, requires_grad=True)
    assert step_flops(lambda: torch.randn(4, 5) @ torch.randn(5, 6)) == 2 * 4 * 5 * 6
    assert step_flops(lambda: torch.nn.functional.linear(x, w).sum().backward()) == 2 * (2 * 4 * 5 * 6)


def test_a_process_benchmark_checks_its_steps_and_runs_a_measurement_process(monkeypatch, capsys, tmp_path):
    """bench_levers and bench_designs share this command line: too few steps is one line and exit 2; a --child
    process prints its measurement as JSON and exits 0; the parent needs the cached features."""
    import pytest

    from frozenbridge.tools.bench import process_bench_args

    def ask(*argv):
        monkeypatch.setattr(sys, "argv", ["bench", *argv])
        with pytest.raises(SystemExit) as stop:
            process_bench_args("frozenbridge.tools.x", "doc", 20, "steps", tmp_path / "out.json", ["a"],
                               lambda name, steps: {"name": name, "steps": steps})
        return stop.value.code, capsys.readouterr()

    code, out = ask("--steps", "2")
    assert code == 2 and out.err.strip() == "error: --steps = 2: at least 4 (the step is the median after the first two)"
    code, out = ask("--child", "a", "--steps", "5")
    assert code == 0 and json.loads(out.out) == {"name": "a", "steps": 5}
    monkeypatch.chdir(tmp_path)
    code, out = ask()
    assert code == 2 and "train.parquet: no such file; run `dvc repro shapes_encode` first" in out.err
