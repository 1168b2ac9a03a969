"""The command line and the measurement processes of a benchmark that measures each side in a process of its own,
as a stage runs (designs, startup); no `main`: it measures nothing itself.

The parent runs `python -m frozenbridge.bench NAME --child WHAT --steps N` once a side; the child prints its
measurement as one line of JSON and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def process_bench_args(name: str, doc: str, steps: int, steps_help: str, out: Path, children: list[str],
                       child: Callable[[str, int], dict], argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of benchmark `name`: --steps, --out and the hidden --child. A measurement process (--child
    WHAT) prints `child(WHAT, steps)` as JSON and exits; the parent gets its arguments back once the cached features
    it reads are there."""
    ap = argparse.ArgumentParser(prog=f"python -m frozenbridge.bench {name}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=steps, help=f"{steps_help} (default {steps})")
    ap.add_argument("--out", type=Path, default=out, help=f"where the rows go (default {out})")
    ap.add_argument("--child", choices=children, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.steps < 4:
        print(f"error: --steps = {args.steps}: at least 4 (the step is the median after the first two)",
              file=sys.stderr)
        sys.exit(2)
    if args.child:
        print(json.dumps(child(args.child, args.steps)))
        sys.exit(0)
    from frozenbridge.shapes.paths import FEATURES

    if not (FEATURES / "train.parquet").is_file():
        print(f"error: {FEATURES / 'train.parquet'}: no such file; run `dvc repro shapes_encode` first",
              file=sys.stderr)
        sys.exit(2)
    return args


def child_command(name: str, what: str, steps: int) -> list[str]:
    """The command of one measurement process of benchmark `name`."""
    return [sys.executable, "-m", "frozenbridge.bench", name, "--child", what, "--steps", str(steps)]


def run_child(name: str, what: str, steps: int, env: dict[str, str] | None = None) -> dict:
    """Run one measurement process and return what it printed (its last line, JSON). A failed process raises
    subprocess.CalledProcessError, whose last line `last_error` gives."""
    proc = subprocess.run(child_command(name, what, steps), env={**os.environ, **(env or {})}, check=True,
                          capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def last_error(err: subprocess.CalledProcessError) -> str:
    """The last line a failed measurement process wrote to stderr."""
    return ((err.stderr or "").strip().splitlines()[-1:] or ["no message"])[0]
