"""The one entry point of the benchmarks, `python -m frozenbridge.bench NAME`, and the one row format they write
(frozenbridge.bench.rows): no name lists them, an unknown name is one line and exit 2, a row's ratio is b / a, a lone
value has none, and the table shows every row."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from frozenbridge.bench import rows
from frozenbridge.bench.__main__ import benchmarks, main

MOVED = {"steps", "designs", "gpu", "startup", "prefill", "reference"}  # the benchmarks that were tools.bench*


def test_no_name_lists_every_benchmark_with_its_line():
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.bench"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    listed = {line.split()[0] for line in proc.stdout.split("benchmarks:\n", 1)[1].split("\n\n", 1)[0].splitlines()}
    assert MOVED <= listed == set(benchmarks())
    assert "Where the time goes" in proc.stdout  # the first line of the steps benchmark's docstring


def test_the_helpers_are_no_benchmarks():
    assert not {"rows", "parts", "processes", "__main__", "__init__"} & set(benchmarks())


def test_an_unknown_name_is_one_line_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["nope"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: no benchmark 'nope'") and all(name in err for name in MOVED)


def test_a_name_runs_that_benchmark_with_the_rest_of_the_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["gpu", "--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage: python -m frozenbridge.bench gpu ")


def test_a_row_is_b_over_a_and_a_lone_value_has_no_ratio():
    r = rows.row("step", "eager", 2.0, "compiled", 3.0)
    assert r == {"measure": "step", "a": "eager", "a_value": 2.0, "b": "compiled", "b_value": 3.0, "ratio": 1.5}
    assert rows.row("sweep", "s", 2.0, "MB", 3.0, ratio=False)["ratio"] is None
    assert rows.row("given", "s", 2.0, "s", 3.0, ratio=0.25, fraction=True) == {
        "measure": "given", "a": "s", "a_value": 2.0, "b": "s", "b_value": 3.0, "ratio": 0.25, "fraction": True}
    assert math.isnan(rows.row("zero", "a", 0.0, "b", 1.0)["ratio"])
    v = rows.value_row("encode", 86.7, "pictures/s")
    assert v["ratio"] is None and v["a"] == "pictures/s" and v["a_value"] == 86.7 and v["b"] == ""


def test_the_table_prints_every_row(tmp_path, capsys):
    saved = [rows.row("generation, batch 4", "KV cache", 1.0, "recompute", 4.0),
             rows.row("matmul throughput", "peak", 100.0, "step", 50.0, fraction=True),
             rows.value_row("encode, batch 4", 12.5, "pictures/s")]
    table = rows.format_table(saved)
    for r in saved:
        assert r["measure"] in table
    assert "4.00x" in table and "50%" in table and "pictures/s 12.5" in table and "nan" not in table
    info = {"device": "CPU, 2 cores", "torch": "2.x", "mode": "quick", "tool": "python -m frozenbridge.bench x"}
    rows.save_rows(tmp_path / "out" / "x.json", saved, info)
    printed = capsys.readouterr().out
    assert table in printed and printed.startswith("CPU, 2 cores, torch 2.x, quick")
    written = json.loads((tmp_path / "out" / "x.json").read_text())
    assert written["machine"] == info and [r["measure"] for r in written["rows"]] == [r["measure"] for r in saved]


def test_the_report_names_a_saved_benchmarks_command_and_leaves_a_lone_values_second_side_empty():
    from frozenbridge.tools.report import bench_table

    machine = {"device": "CPU", "torch": "2.x", "date": "2026-12-03"}
    saved = {"machine": {**machine, "mode": "40 steps", "tool": "python -m frozenbridge.bench startup"},
             "rows": [rows.row("step", "compiled", 1.0, "eager", 2.0), rows.value_row("alone", 3.0, "s")]}
    lines = bench_table(saved)
    assert lines[0].startswith("Benchmark (`python -m frozenbridge.bench startup`, 40 steps, CPU")
    assert lines[-1] == "| alone | s 3 |  | — |"  # a lone value: no second side
    assert bench_table({"machine": {**machine, "mode": "full"}, "rows": []})[0].startswith(
        "Benchmark (`python -m frozenbridge.bench steps`, full mode,")
