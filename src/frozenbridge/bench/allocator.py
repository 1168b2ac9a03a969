"""The memory allocator under a training step: glibc's malloc against tcmalloc and jemalloc, in processes of their own.

    python -m frozenbridge.bench allocator                # bench/allocator-cpu-2core.json
    python -m frozenbridge.bench allocator --rounds 2     # shorter

A process takes its allocator when it starts (LD_PRELOAD), so each side runs in a process of its own, in turns
(glibc, tcmalloc, jemalloc, glibc, ...) for --rounds rounds, so drift moves all alike. Each process trains as a
shapes stage does on a CPU: the embedded language model with its decoder layers compiled, the MLP connector at the
benchmark step's sizes (16 captions, 49 image tokens, stand-in features), --steps steps. Rows: each allocator's
median step over its rounds against glibc's, and whether its trained connector and its greedy captions are glibc's
bit for bit (an allocator may change the time, never the numbers). Debian's packages: libtcmalloc-minimal4,
libjemalloc2; an allocator not installed is left out. setup.sh makes the activated .venv preload tcmalloc.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

from frozenbridge.bench.processes import last_error
from frozenbridge.bench.rows import machine_info, row, save_rows, value_row

NAME = "allocator"
DEFAULT_OUT = Path("bench/allocator-cpu-2core.json")
LIBRARIES = {"tcmalloc": "libtcmalloc_minimal.so.4", "jemalloc": "libjemalloc.so.2"}
GLIBC = "glibc"


def allocators() -> dict[str, str]:
    """Each allocator installed here and what LD_PRELOAD names for it ("" for glibc's own malloc)."""
    found = {GLIBC: ""}
    for name, library in LIBRARIES.items():
        paths = sorted(Path("/usr/lib").glob(f"*-linux-gnu/{library}"))
        if paths:
            found[name] = str(paths[0])
    return found


def child(steps: int) -> dict:
    """One measurement process: `steps` compiled caption steps timed, then digests of the trained connector and of
    the captions it writes."""
    import time

    from frozenbridge.bench.parts import caption_items, train_step
    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.model import VLM
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.frozen import frozen_language
    from frozenbridge.core.precision import compile_layers

    device = pick_device("cpu")
    lm, bf16 = frozen_language("smollm2-135m", device)
    torch.manual_seed(0)
    connector = MergedPatchMLP([14, 14, 112], lm.width, merge=2).to(device)
    vlm = VLM(lm, connector, device, bf16)
    compile_layers(lm.model)
    step = train_step(vlm, torch.randn(16, 196, 112), caption_items(16))
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    weights = hashlib.sha256(b"".join(p.detach().float().numpy().tobytes() for p in connector.parameters()))
    pictures = torch.randn(16, 196, 112, generator=torch.Generator().manual_seed(1))
    captions = vlm.generate(caption_items(16), pictures, 12)
    return {"step": statistics.median(times[2:]), "weights": weights.hexdigest(),
            "captions": hashlib.sha256("\n".join(captions).encode()).hexdigest(), "device": str(device)}


def measure(preload: str, steps: int) -> dict:
    command = [sys.executable, "-m", "frozenbridge.bench", NAME, "--child", "--steps", str(steps)]
    env = {**os.environ, "LD_PRELOAD": preload}  # "" for glibc, whatever the shell preloads
    proc = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def rows_from(results: dict[str, list[dict]]) -> list[dict]:
    """Each allocator's median step over its rounds against glibc's, and whether its numbers are glibc's."""
    base = results[GLIBC]
    glibc_step = statistics.median(r["step"] for r in base)
    rows = [value_row(f"caption step, compiled layers, {GLIBC} malloc: median of {len(base)} processes", glibc_step,
                      "s")]
    for name, runs in results.items():
        if name == GLIBC:
            continue
        step = statistics.median(r["step"] for r in runs)
        rows.append(row(f"caption step, compiled layers: {name} against {GLIBC} malloc", f"{name} s", step,
                        f"{GLIBC} s", glibc_step))
        same = all(r["weights"] == base[0]["weights"] and r["captions"] == base[0]["captions"] for r in runs)
        rows.append(value_row(f"  {name}: trained connector and captions the same bits as {GLIBC}'s", float(same),
                              "same (1 = yes)"))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=f"python -m frozenbridge.bench {NAME}", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20, help="caption steps a process trains (default 20)")
    ap.add_argument("--rounds", type=int, default=3, help="processes of each allocator, in turns (default 3)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the rows go (default {DEFAULT_OUT})")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.steps < 4 or args.rounds < 1:
        print(f"error: --steps = {args.steps}, --rounds = {args.rounds}: at least 4 steps (the median after the "
              "first two) and 1 round", file=sys.stderr)
        sys.exit(2)
    if args.child:
        print(json.dumps(child(args.steps)))
        return
    found = allocators()
    results: dict[str, list[dict]] = {name: [] for name in found}
    for turn in range(args.rounds):
        for name, preload in found.items():
            try:
                results[name].append(measure(preload, args.steps))
            except subprocess.CalledProcessError as err:
                raise SystemExit(f"the {name} measurement failed: {last_error(err)}") from None
            print(f"round {turn + 1}, {name}: {results[name][-1]['step']:.3f} s", file=sys.stderr)
    info = machine_info(torch.device(results[GLIBC][0]["device"]),
                        f"{args.rounds} processes an allocator, {args.steps} steps each",
                        f"python -m frozenbridge.bench {NAME}")
    save_rows(args.out, rows_from(results), info)


if __name__ == "__main__":
    main()
