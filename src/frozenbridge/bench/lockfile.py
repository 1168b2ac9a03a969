"""DVC's bookkeeping between stages: dvc.lock read with ruamel.yaml's C parser against its pure-Python one.

    python -m frozenbridge.bench lockfile                     # the repo's dvc.lock; bench/lockfile-cpu-2core.json
    python -m frozenbridge.bench lockfile --lock other/dvc.lock --rounds 9

`dvc repro` reads dvc.lock (and dvc.yaml) several times around every stage it runs, and reads and rewrites dvc.lock
once after each. With the default run's 60-odd stages the lock holds 200 KB of YAML, so this bookkeeping costs
seconds a stage where a stage's own work can take less. ruamel.yaml (DVC's YAML library) reads with a C parser when
ruamel.yaml.clib is installed; since ruamel.yaml 0.19 that is an extra no longer pulled in, so pyproject names it.
Rows: a plain read (what DVC's status and stage loading do) with the C parser against pure Python; the round-trip
read and rewrite DVC does after each stage (pure Python in both cases: ruamel has no C round-trip reader), beside
the plain read. Each value is the median of `--rounds` reads in this process, after one read to warm up.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from frozenbridge.bench.rows import row, save_rows

DEFAULT_OUT = Path("bench/lockfile-cpu-2core.json")


def measure(text: str, rounds: int) -> list[dict]:
    from ruamel.yaml import YAML

    from frozenbridge.core.measure import timed

    def plain(pure: bool):
        return lambda: YAML(typ="safe", pure=pure).load(text)

    def round_trip() -> None:  # dvc.utils.serialize's modify_yaml: a round-trip read, then the whole file written
        yaml = YAML()
        yaml.default_flow_style = False
        yaml.dump(yaml.load(text), io.StringIO())

    c_read = timed(plain(False), rounds)
    pure_read = timed(plain(True), rounds)
    rewrite = timed(round_trip, rounds)
    size = f"dvc.lock, {len(text.encode()) / 1000:.0f} KB"
    return [row(f"{size}: a plain read", "C parser s", c_read, "pure Python s", pure_read),
            row(f"{size}: read and rewritten after a stage (round trip)", "plain read s, C parser", c_read,
                "round trip s, pure Python", rewrite)]


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.bench lockfile", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lock", type=Path, default=Path("dvc.lock"), help="the lock file to read (default dvc.lock)")
    ap.add_argument("--rounds", type=int, default=5, help="reads of each kind; the median is kept (default 5)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the rows go (default {DEFAULT_OUT})")
    args = ap.parse_args(argv)
    from ruamel.yaml.main import CParser

    if not args.lock.is_file():
        fail(f"--lock {args.lock}: no such file (run it at the repo root, or name a dvc.lock)")
    if args.rounds < 1:
        fail(f"--rounds = {args.rounds}: at least 1")
    if CParser is None:
        fail("ruamel.yaml's C parser is not installed: pip install ruamel.yaml.clib (pyproject names it)")
    import torch

    from frozenbridge.bench.rows import machine_info

    rows = measure(args.lock.read_text(), args.rounds)
    save_rows(args.out, rows, machine_info(torch.device("cpu"), "full", "python -m frozenbridge.bench lockfile"))


if __name__ == "__main__":
    main()
