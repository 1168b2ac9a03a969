"""The one row format every benchmark writes, its table and its file.

A row compares two measurements side by side: `a` and `b` name them, `a_value` and `b_value` hold them, and `ratio`
is b / a (how many times slower b is), a share when `fraction` is set, or None for a sweep point or a lone value.
A saved benchmark is {"machine": {...}, "rows": [...]} in bench/*.json; `python -m frozenbridge.tools.report` puts
the rows in the results page.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a machine is described, so the rows and their table need no torch
    import torch


def row(measure: str, a: str, a_value: float, b: str, b_value: float, ratio: bool | float | None = True,
        fraction: bool = False) -> dict:
    """One row. `ratio`: True computes b / a, a number is taken as it is, False or None leaves it out."""
    if ratio is True:
        ratio = b_value / a_value if a_value else float("nan")
    elif ratio is False:
        ratio = None
    out = {"measure": measure, "a": a, "a_value": a_value, "b": b, "b_value": b_value, "ratio": ratio}
    if fraction:
        out["fraction"] = True
    return out


def value_row(measure: str, value: float, unit: str) -> dict:
    """A lone measurement (a throughput, a memory peak) in the same format: `a` is its unit, no `b` and no ratio."""
    return {"measure": measure, "a": unit, "a_value": value, "b": "", "b_value": None, "ratio": None}


def ratio_text(r: dict) -> str:
    if r["ratio"] is None:
        return "—"
    return f"{r['ratio']:.0%}" if r.get("fraction") else f"{r['ratio']:.2f}x"


def side(label: str, value: float) -> str:
    """One side of a row as the table shows it: its label and value, or nothing for a lone value's missing side."""
    return "" if not label and (value is None or math.isnan(value)) else f"{label} {value:.4g}"


def format_table(rows: list[dict]) -> str:
    lines = [f"{'measure':<56} {'a':>28} {'b':>28} {'b / a':>8}", "-" * 123]
    for r in rows:
        lines.append(f"{r['measure']:<56} {side(r['a'], r['a_value']):>28} {side(r['b'], r['b_value']):>28} "
                     f"{ratio_text(r):>8}")
    return "\n".join(lines)


def machine_info(device: torch.device, mode: str, tool: str) -> dict:
    """Which machine and build made the rows: device, torch, the mode, the date and the command; on a CPU also its
    model and how it runs bf16 (AMX, AVX512-BF16 or none), since 2-core machines of one name differ by 2x and more."""
    from frozenbridge.core.measure import machine
    from frozenbridge.tools.repro_timing import bf16_path, cpu_model

    info = {**machine(device, quick=False), "mode": mode, "tool": tool, "date": time.strftime("%Y-%m-%d")}
    if device.type == "cpu":
        info.update(cpu_model=cpu_model(), bf16_path=bf16_path())
    return info


def save_rows(out: Path | str | None, rows: list[dict], info: dict) -> None:
    """Print the rows' table under the machine's line, and write them with `info` to `out` (JSON) where given."""
    print(f"{info['device']}, torch {info['torch']}, {info['mode']}")
    print(format_table(rows))
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps({"machine": info, "rows": rows}, indent=2) + "\n")
        print(f"wrote {out}")
