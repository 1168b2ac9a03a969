"""What every stage script shares: its argument parser, its inputs checked before work starts, and the wrapper that
turns a FrozenbridgeError into one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Callable

from frozenbridge.core.errors import FrozenbridgeError


def run_cli(main: Callable[[], None]) -> None:
    """Run a stage's main; a FrozenbridgeError prints one line to stderr and exits 2 instead of a traceback."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        main()
    except FrozenbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def stage_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser whose --help prints the stage's docstring as written, with the usual --params; its usage
    line names the script as dvc.yaml runs it (`python stages/shapes/train.py`, not `train.py`)."""
    script = Path(sys.argv[0])
    prog = f"python {os.path.relpath(script)}" if script.parent.parent.name == "stages" else None
    ap = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    return ap


def require(*paths: str | Path, stage: str) -> None:
    """Every path exists, else one line naming the first missing one and the stage that makes it."""
    for p in paths:
        if not Path(p).exists():
            raise FrozenbridgeError(f"{p}: not found; run `dvc repro {stage}` first")
