"""The steps benchmark's quick mode prints a complete table, the gpu benchmark runs at toy sizes, and the process
benchmarks' command line (speeds are measured, never asserted here)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest


def test_quick_benchmark_table_is_complete(tmp_path, tiny_models):
    """Every row of `bench steps --quick`, on the embedded encoder and the tiny Qwen2 (speeds are not checked: the
    rows' code is the same for any language model, and the embedded one would make this the suite's slowest call)."""
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.bench", "steps", "--quick", "--out", str(out),
                           "--language", str(tiny_models["qwen2"])],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = json.loads(out.read_text())
    rows = saved["rows"]
    assert saved["machine"]["mode"] == "quick" and saved["machine"]["device"]
    assert saved["machine"]["tool"] == "python -m frozenbridge.bench steps"
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
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.bench", "gpu", "--tiny", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = json.loads(out.read_text())
    rows = saved["rows"]
    measures = " | ".join(r["measure"] for r in rows)
    for name in ("train step", "bf16", "fp32", "memory", "KV cache", "static KV cache", "recompute", "encode"):
        assert name in measures
    # lone values in the one row format: the unit as `a`, no second side, no ratio
    assert all(r["a_value"] > 0 and math.isfinite(r["a_value"]) and r["b"] == "" and r["ratio"] is None
               for r in rows)
    assert {r["a"] for r in rows} >= {"s", "tokens/s", "pictures/s"}
    from frozenbridge.tools.report import gpu_table

    table = "\n".join(gpu_table(saved))
    assert "`python -m frozenbridge.bench gpu`" in table and all(f"| {r['measure']} |" in table for r in rows)


def test_step_flops_count_matmuls_forward_and_backward():
    """The throughput row's numerator: matmul FLOPs from the shapes, input gradients included, frozen weights not."""
    import torch

    from frozenbridge.core.measure import step_flops

    w = torch.randn(6, 5)  # frozen: no weight gradient is computed
    x = torch.randn(4, 5, requires_grad=True)
    assert step_flops(lambda: torch.randn(4, 5) @ torch.randn(5, 6)) == 2 * 4 * 5 * 6
    assert step_flops(lambda: torch.nn.functional.linear(x, w).sum().backward()) == 2 * (2 * 4 * 5 * 6)


def test_a_process_benchmark_checks_its_steps_and_runs_a_measurement_process(monkeypatch, capsys, tmp_path):
    """The startup and designs benchmarks share this command line: too few steps is one line and exit 2; a --child
    process prints its measurement as JSON and exits 0; the parent needs the cached features."""
    import pytest

    from frozenbridge.bench.processes import process_bench_args

    def ask(*argv):
        with pytest.raises(SystemExit) as stop:
            process_bench_args("x", "doc", 20, "steps", tmp_path / "out.json", ["a"],
                               lambda name, steps: {"name": name, "steps": steps}, list(argv))
        return stop.value.code, capsys.readouterr()

    code, out = ask("--steps", "2")
    assert code == 2
    assert out.err.strip() == "error: --steps = 2: at least 4 (the step is the median after the first two)"
    code, out = ask("--child", "a", "--steps", "5")
    assert code == 0 and json.loads(out.out) == {"name": "a", "steps": 5}
    monkeypatch.chdir(tmp_path)
    code, out = ask()
    assert code == 2 and "train.parquet: no such file; run `dvc repro shapes_encode` first" in out.err


def test_a_measurement_process_is_the_benchmark_run_as_a_child():
    """The parent starts `python -m frozenbridge.bench NAME --child ...`: the one entry point, the benchmark by name."""
    from frozenbridge.bench.processes import child_command

    assert child_command("startup", "eager", 40)[1:] == ["-m", "frozenbridge.bench", "startup", "--child", "eager",
                                                         "--steps", "40"]


def test_the_process_benchmarks_write_the_one_row_format():
    """designs and startup turn their processes' measurements into rows.row rows: b / a where a ratio is meant."""
    from frozenbridge.bench import designs, startup
    from frozenbridge.bench.rows import row

    def design(step, flops):
        return {"params": 10, "image_tokens": 49, "caption": {"step": step, "flops": flops},
                "question": {"step": step / 2, "flops": flops}}
    rows = designs.rows_from({"mlp": design(1.0, 4e9), "resampler-16": design(0.5, 2e9)})
    assert rows[3] == row("resampler-16 (10 parameters, 49 image tokens): caption step", "s", 0.5, "mlp s", 1.0)
    assert rows[3]["ratio"] == 2.0 and rows[5]["ratio"] == 2.0  # the MLP's step and FLOPs over the design's

    def process(first, step, wall):
        return {"batch": "5 pictures", "imports": 1.0, "model": 2.0, "features": 1.0, "wall": wall,
                "times": [first, first, step, step, step]}
    rows = startup.rows_from(process(1.0, 0.5, 10.0), process(20.0, 0.4, 30.0), process(3.0, 0.4, 12.0))
    assert all(set(r) == {"measure", "a", "a_value", "b", "b_value", "ratio"} for r in rows)
    assert rows[0]["ratio"] == 0.5 / 0.4 and rows[1]["ratio"] is None
    assert rows[-1]["a_value"] == 4.0 and rows[-1]["b_value"] == 4.0 / 0.5
    levers = startup.lever_rows({"model": {"cast": 3.0, "straight": 1.5}, "features": {"before": 0.8, "plain": 0.2},
                                 "rows": 1500})
    assert [r["ratio"] for r in levers] == [2.0, 4.0]  # what stages did before, over the lever
    assert "1,500 pictures" in levers[1]["measure"]


def test_the_digits_benchmark_times_both_greedy_captionings_at_the_study_sizes(tmp_path, capsys):
    """`bench digits --quick`: the captions with the cache and recomputed (the bench stops where they differ), and an
    adapter epoch with each; sizes from params.yaml's digits section."""
    from frozenbridge.bench.digits import main

    out = tmp_path / "digits.json"
    main(["--quick", "--out", str(out)])
    saved = json.loads(out.read_text())
    assert saved["machine"]["tool"] == "python -m frozenbridge.bench digits" and saved["machine"]["mode"] == "quick"
    assert saved["machine"]["language"] == {"width": 64, "layers": 2} and saved["machine"]["test_digits"] == 100
    captions, epoch = saved["rows"]
    assert captions["measure"] == "digits: greedy captions of 100 test digits, s"
    assert (captions["a"], captions["b"]) == ("cached s", "recomputed s")
    assert epoch["b_value"] - epoch["a_value"] == pytest.approx(captions["b_value"] - captions["a_value"])  # same steps
    assert "digits: an adapter epoch (3 steps)" in capsys.readouterr().out
