"""The command line the in-process benchmarks on the embedded backbones share (floor, step_levers, evaluation): the
backbones, the device and where the rows go; then the run timed and its rows saved with the machine that made them."""

from __future__ import annotations

import argparse
import time
from typing import Callable


def parser(name: str, doc: str | None, out_example: str) -> argparse.ArgumentParser:
    """`python -m frozenbridge.bench NAME`'s parser with --device, --vision, --language and --out; each benchmark adds
    its own options."""
    ap = argparse.ArgumentParser(prog=f"python -m frozenbridge.bench {name}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default auto)")
    ap.add_argument("--vision", default="efficientnet-lite0", help="vision backbone (default: embedded)")
    ap.add_argument("--language", default="smollm2-135m", help="language model (default: embedded)")
    ap.add_argument("--out", default=None, help=f"write the rows here (JSON), e.g. {out_example}")
    return ap


def run_and_save(name: str, args: argparse.Namespace, run: Callable[[argparse.Namespace], tuple[list[dict], dict]],
                 mode: str) -> None:
    """`run(args)` -> (rows, more about the run), timed; the rows printed and saved to --out with this machine, the
    mode, the command and the seconds the whole benchmark took."""
    from frozenbridge.bench.rows import machine_info, save_rows
    from frozenbridge.core.device import pick_device

    start = time.perf_counter()
    rows, extra = run(args)
    info = machine_info(pick_device(args.device), mode, f"python -m frozenbridge.bench {name}")
    info.update(extra, seconds=round(time.perf_counter() - start, 1))
    save_rows(args.out, rows, info)
