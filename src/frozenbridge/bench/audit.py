"""The audit of a 1,000-picture folder with 8 questions a picture, timed part by part against issue 52's 20 minutes.

    python -m frozenbridge.bench audit                          # the full size: bench/audit-cpu-2core.json
    python -m frozenbridge.bench audit --train 40 --test 10 --out /tmp/a.json   # a small folder: checks the path
    python -m frozenbridge.bench audit --keep /tmp/audit-bench  # keep the folder and the audit to look at

Issue 52, point 6: a folder of 1,000 training pictures with 8 questions each and 200 test pictures is audited in at
most 20 minutes on a 2-core CPU with bf16 at the default steps.

The folder is synthetic and written first, into a temporary directory (or --keep DIR): the shapes study's pictures
(shapes.data of --params, drawn by its generator from its seeds, so they look like the study's), --train of its
training split in train/ and --test in test/, half from its seen-pair test split and half from its held-out-pair one
(those marked "heldout": true), each with its caption and exactly 8 questions computed from the scene, numbers as
the study writes them ("three"):

    count    How many shapes are there? / How many circles are there?
    color    What color is the leftmost shape? / ... the rightmost shape? / ... the largest shape?
    shape    What shape is the leftmost one? / What shape is the rightmost one?
    exists   Is there a <color> shape? (yes or no; the color drawn for each picture from a seeded stream)

Then the audit runs on it with --params' defaults (its audit: section; the folder replaces audit.folder) into a
temporary folder, exactly as `frozenbridge audit FOLDER` runs it: `run_audit` itself, its five parts (folder read and
checked, encode, train, check, page) each wrapped with a timer, so the parts are the chain's own calls in the chain's
order. A line is logged as each part ends. Writing the synthetic folder is not part of the audit and not in its time.

Rows (the one row format, bench/rows.py): the seconds of each part and of the whole chain, the seconds the folder
took to write, and the goal row, 1200 s against the measured whole: its ratio is measured / goal, at most 1 meets it.
The machine (its CPU and how it runs bf16), the pictures, the questions, the step counts and the precision the run
used are saved with the rows. With --keep DIR the folder is DIR/folder and the audit (its page: DIR/audit/audit.md)
DIR/audit, both kept (DIR/folder must not exist yet, or be empty).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import logging
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from frozenbridge.bench.rows import row, value_row

NAME = "audit"
DEFAULT_OUT = Path("bench/audit-cpu-2core.json")
GOAL_S = 1200.0  # issue 52, point 6: 20 minutes
QUESTIONS = 8  # a picture
EXISTS_STREAM = 52  # the seeds path of the exists questions' colors (seed, this, split index): apart from the study's
# the chain's parts as chain.py names them, in the order run_audit calls them, and what each row calls them
PARTS = {"read_audit_folder": "folder read and checked",
         "encode": "encode: every picture through the frozen encoder",
         "train": "train",
         "check": "check: test questions answered under 4 conditions",
         "write_page": "page written"}

log = logging.getLogger("frozenbridge.bench.audit")


def bench_questions(shapes: list[dict], exists_color: str) -> list[dict]:
    """The picture's 8 questions, answers computed from its shapes ({color, kind, cx, cy, size}), in the audit
    format: {"question", "answer", "kind"}."""
    from frozenbridge.shapes.data.vocab import NUMBER_WORDS

    leftmost = min(shapes, key=lambda s: s["cx"])
    rightmost = max(shapes, key=lambda s: s["cx"])
    largest = max(shapes, key=lambda s: s["size"])
    circles = sum(s["kind"] == "circle" for s in shapes)
    present = any(s["color"] == exists_color for s in shapes)
    asked = [("count", "How many shapes are there?", NUMBER_WORDS[len(shapes)]),
             ("count", "How many circles are there?", NUMBER_WORDS[circles]),
             ("color", "What color is the leftmost shape?", leftmost["color"]),
             ("color", "What color is the rightmost shape?", rightmost["color"]),
             ("color", "What color is the largest shape?", largest["color"]),
             ("shape", "What shape is the leftmost one?", leftmost["kind"]),
             ("shape", "What shape is the rightmost one?", rightmost["kind"]),
             ("exists", f"Is there a {exists_color} shape?", "yes" if present else "no")]
    return [{"question": q, "answer": a, "kind": k} for k, q, a in asked]


def write_bench_folder(out: Path, train: int, test: int, params_path: Path) -> Path:
    """An audit folder at `out` (new or empty): `train` pictures of the shapes study's training split in train/,
    `test` in test/ (the first half of the study's seen-pair test split, then the rest from its held-out-pair split,
    marked heldout), each with its caption and 8 questions (`bench_questions`). Drawn from shapes.data of
    `params_path` and its seeds: the same bytes every time. Written atomically; returns `out`."""
    import numpy as np

    from frozenbridge.audit.data.folder import METADATA
    from frozenbridge.core.atomic import atomic_path
    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.core.seeds import rng
    from frozenbridge.shapes.data.splits import generate_split, split_seeds
    from frozenbridge.shapes.data.vocab import COLORS, SPLITS
    from frozenbridge.shapes.params import load_params

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FrozenbridgeError(f"{out}: already exists; the benchmark's folder is written to a new or empty folder")
    cfg = load_params(params_path).shapes.data
    seeds = split_seeds(cfg.seed)
    heldout = test // 2
    parts = {"train": (("train", train),), "test": (("test_seen", test - heldout), ("test_heldout", heldout))}
    colors = list(COLORS)
    with atomic_path(out) as tmp:
        for split, pieces in parts.items():
            (tmp / split).mkdir(parents=True)
            rows = []
            for part, n in pieces:
                if not n:
                    continue
                table = generate_split(part, n, cfg, seeds[part])
                draw: np.random.Generator = rng(cfg.seed, EXISTS_STREAM, SPLITS.index(part))
                for pid, png, shapes, caption in zip(*(table.column(c).to_pylist()
                                                       for c in ("id", "png", "shapes", "caption"))):
                    name = f"{part}-{pid:05d}.png"
                    (tmp / split / name).write_bytes(png)
                    r = {"file_name": name, "text": caption,
                         "questions": bench_questions(shapes, colors[int(draw.integers(len(colors)))])}
                    rows.append({**r, "heldout": True} if part == "test_heldout" else r)
            (tmp / split / METADATA).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows),
                                                encoding="utf-8")
    return out


@contextmanager
def timed_chain(seconds: dict[str, float]) -> Iterator[None]:
    """While inside, chain.py's five parts (PARTS) are wrapped with a timer: run_audit calls them as it always does,
    and each one's seconds land in `seconds` under its name, with a line logged as it ends."""
    from frozenbridge.audit import chain

    saved = {name: getattr(chain, name) for name in PARTS}

    def timed(name, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
                log.info("audit bench: %s: %.1f s", PARTS[name], seconds[name])
        return wrapper

    for name, fn in saved.items():
        setattr(chain, name, timed(name, fn))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(chain, name, fn)


def audit_rows(train: int, test: int, seconds: dict[str, float], total: float, written: float, numbers: dict) -> list:
    """The rows: a part's seconds each, the whole chain's, the folder's writing, and the goal against the whole."""
    steps = {k: (numbers["training"][k] or {}).get("steps", 0) for k in ("stage1", "stage2")}
    questions = numbers["folder"]["test"]["questions"]
    labels = {**PARTS, "train": f"train: {steps['stage1']} caption + {steps['stage2']} question steps",
              "check": f"check: {questions} test questions answered under 4 conditions"}
    rows = [value_row(f"audit part: {labels[name]}", seconds.get(name, 0.0), "s") for name in PARTS]
    rows += [value_row(f"audit, the whole chain ({train} + {test} pictures)", total, "s"),
             value_row("synthetic folder written (not in the audit's time)", written, "s"),
             row(f"audit of {train} training pictures x {QUESTIONS} questions + {test} test pictures", "goal (s)",
                 GOAL_S, "measured (s)", total)]
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=f"python -m frozenbridge.bench {NAME}", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=1000, help="training pictures in the folder (default 1000)")
    ap.add_argument("--test", type=int, default=200,
                    help="test pictures, half of them held out (default 200)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help=f"write the rows here (JSON; default {DEFAULT_OUT})")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="write the folder to DIR/folder and the audit to DIR/audit, and keep both (default: a "
                         "temporary directory, removed)")
    ap.add_argument("--params", default="params.yaml",
                    help="params.yaml whose shapes.data draws the pictures and whose audit: section, backbones, seed "
                         "and device the audit runs with (default params.yaml)")
    args = ap.parse_args(argv)
    if args.train < 1 or args.test < 2:
        ap.error("--train must be at least 1 and --test at least 2 (one seen, one held out)")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("frozenbridge").setLevel(logging.INFO)

    import torch

    from frozenbridge.audit.chain import run_audit
    from frozenbridge.audit.params import Params
    from frozenbridge.bench.rows import machine_info, save_rows
    from frozenbridge.core.device import pick_device

    params = Params.load(args.params)
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as temporary:
        root = Path(args.keep) if args.keep else Path(temporary)
        start = time.perf_counter()
        folder = write_bench_folder(root / "folder", args.train, args.test, Path(args.params))
        written = time.perf_counter() - start
        log.info("audit bench: folder of %d training and %d test pictures written to %s in %.1f s", args.train,
                 args.test, folder, written)
        # one replicate, as `frozenbridge audit` trains a folder of your own by default
        params = dataclasses.replace(params, audit=dataclasses.replace(params.audit, folder=str(folder),
                                                                       replicates=(0,)))
        seconds: dict[str, float] = {}
        with timed_chain(seconds):
            start = time.perf_counter()
            numbers = run_audit(params, folder, root / "audit")
            total = time.perf_counter() - start
        log.info("audit bench: the whole chain: %.1f s (goal %.0f s)", total, GOAL_S)
    settings = numbers["settings"]
    steps = {k: (numbers["training"][k] or {}).get("steps", 0) for k in ("stage1", "stage2")}
    mode = (f"{args.train} training + {args.test} test pictures x {QUESTIONS} questions, {steps['stage1']} + "
            f"{steps['stage2']} steps, {settings['precision']}")
    info = machine_info(torch.device(pick_device(params.device)), mode, f"python -m frozenbridge.bench {NAME}")
    info.update(train_pictures=args.train, test_pictures=args.test, heldout_pictures=args.test // 2,
                questions_per_picture=QUESTIONS, stage1_steps=steps["stage1"], stage2_steps=steps["stage2"],
                precision=settings["precision"], vision=settings["vision"], language=settings["language"],
                params=str(args.params), seconds=round(total, 1))
    save_rows(args.out, audit_rows(args.train, args.test, seconds, total, written, numbers), info)


if __name__ == "__main__":
    main()
