"""Time a whole `dvc repro` stage by stage, beside this machine's benchmark step, so wall times quoted in the results
page are measured and say which machine they came from.

    python -m frozenbridge.tools.repro_timing            # run `dvc repro` here (run it in a clean clone for a full run)
    python -m frozenbridge.tools.repro_timing --force    # `dvc repro --force`: every stage, whatever is cached
    python -m frozenbridge.tools.repro_timing --step-after  # only measure the step again, into a run timed before

The benchmark step (embedded backbones, batch 16 captions, 49 image tokens, bf16 where the CPU has it: the step the
time budget is stated for) is measured before and after; a shared machine's speed drifts, so both are kept and the
results page quotes both. In between, `dvc repro` runs with its output passed through, and each "Running stage" line is
timestamped. Training loops log how long their steps took, so a stage's time splits into
steps and the rest (start-up, loading, writing). Writes bench/repro.json; `python -m frozenbridge.tools.report` puts the
numbers in docs/results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import torch

from frozenbridge.comparison.workspace import RESTORED, changed_stages, git
from frozenbridge.core.atomic import write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.stage import run_cli
from frozenbridge.tools.machines import MADE_ON
from frozenbridge.tools.where_it_runs import category, shapes_step_seconds

STAGE = re.compile(r"Running stage '([^']+)'")
STEPS = re.compile(r"(\S+): (\d+) steps in ([\d.]+) s")
UNCHANGED = re.compile(r"Stage '([^']+)' didn't change, skipping")  # and RESTORED: run-cache restores


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo; elsewhere what platform says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def bf16_path() -> str:
    """How this CPU runs bf16 matmuls: AMX tiles, AVX512-BF16 instructions, or none (precision auto runs fp32)."""
    try:
        flags = set(next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                         if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        flags = set()
    found = [name for flag, name in (("amx_bf16", "AMX"), ("avx512_bf16", "AVX512-BF16")) if flag in flags]
    return " + ".join(found) if found else "none (precision auto runs fp32)"


def malloc() -> str:
    """The allocator this process runs on: what LD_PRELOAD names (the activated .venv preloads tcmalloc where setup.sh
    found it), else glibc's own."""
    preload = os.environ.get("LD_PRELOAD", "")
    return next((name for name in ("tcmalloc", "jemalloc") if name in preload), "glibc malloc")


def pick_device_type() -> str:
    from frozenbridge.core.device import pick_device

    return pick_device("auto").type


def benchmark_step(reps: int = 5) -> float:
    """Median seconds of a training step, batch 16 captions at 49 image tokens, the embedded language model."""
    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.model import VLM
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.frozen import frozen_language
    from frozenbridge.core.measure import timed
    from frozenbridge.bench.parts import caption_items, train_step

    device = pick_device("auto")
    lm, bf16 = frozen_language("smollm2-135m", device)
    torch.manual_seed(0)
    vlm = VLM(lm, MergedPatchMLP([14, 14, 112], lm.width, merge=2).to(device), device, bf16)
    feats = torch.randn(16, 196, 112)
    return timed(train_step(vlm, feats, caption_items(16)), reps)


class StageLog:
    """What `dvc repro`'s output says, line by line: each stage's start (`at` seconds), the stages it did not run (up
    to date, or restored from the run cache), and the training steps and their seconds each stage's own log reports
    ("<run>: N steps in S s")."""

    def __init__(self):
        self.marks: list[tuple[str, float]] = []
        self.steps: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.skipped: list[str] = []

    def read(self, text: str, at: float = 0.0) -> None:
        if m := STAGE.search(text):
            self.marks.append((m.group(1), at))
        elif m := UNCHANGED.search(text) or RESTORED.search(text):
            self.skipped.append(m.group(1))
        elif (m := STEPS.search(text)) and self.marks:
            stage = self.marks[-1][0]
            self.steps[stage] = self.steps.get(stage, 0.0) + float(m.group(3))
            self.counts[stage] = self.counts.get(stage, 0) + int(m.group(2))


def run_repro(args: list[str]) -> tuple[float, dict[str, float], StageLog]:
    """Run `dvc repro`, echoing its output; returns total seconds, seconds per stage, and what the log said."""
    proc = subprocess.Popen([sys.executable, "-m", "dvc", "repro", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, bufsize=0)
    start = time.perf_counter()
    log = StageLog()
    buffer = b""
    while chunk := proc.stdout.read(4096):
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        buffer += chunk
        *lines, buffer = re.split(rb"[\r\n]", buffer)
        for line in lines:
            log.read(line.decode(errors="replace"), time.perf_counter() - start)
    if proc.wait() != 0:
        raise SystemExit(f"dvc repro failed (exit {proc.returncode}); no timing written")
    total = time.perf_counter() - start
    ends = [t for _, t in log.marks[1:]] + [total]
    return total, {name: round(end - t, 1) for (name, t), end in zip(log.marks, ends)}, log


def step_fields(log: StageLog) -> dict:
    """The timing's fields read from the stages' own logs."""
    return {"training_steps_seconds": round(sum(log.steps.values()), 1),
            "training_steps_by_stage": {k: round(v, 1) for k, v in log.steps.items()},
            "training_step_counts": log.counts,  # with bench/floor-*.json: the run at its floor (tools.run_floor)
            "skipped_stages": log.skipped}  # not run, so not in the time: a clean clone's unchanged analyses


def this_machine() -> dict:
    """This machine as a timing records it: cores, CPU model, bf16 path, allocator, torch, device and the day."""
    return {"cpu": f"{os.cpu_count()} cores, {platform.machine()}", "cpu_model": cpu_model(), "bf16_path": bf16_path(),
            "malloc": malloc(), "torch": torch.__version__, "device": pick_device_type(),
            "date": time.strftime("%Y-%m-%d")}


def record_made_here(root: Path, timed: Path | None) -> dict:
    """bench/metrics-machine.json: this machine made the workspace's metrics, at HEAD's commit. Refused while a stage
    is out of date (`dvc status`), since the metrics are then not all this run's."""
    changed = changed_stages(root)
    if changed:
        raise FrozenbridgeError(f"dvc status: {len(changed)} stages are not up to date ({', '.join(changed[:3])}...); "
                                "run `dvc repro` to the end here before recording that this machine made the metrics")
    made = {"machine": this_machine(), "commit": git(root, "rev-parse", "--short", "HEAD").strip(),
            "timed": str(timed) if timed is not None else None}
    write_json(root / MADE_ON, made)  # whole or not at all
    return made


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.repro_timing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="rerun every stage (dvc repro --force)")
    ap.add_argument("--json", type=Path, default=Path("bench/repro.json"),
                    help="where the timing is written, for the results page (default bench/repro.json)")
    ap.add_argument("--step-after", action="store_true",
                    help="only measure the benchmark step and record it as the after-run step of --json")
    ap.add_argument("--steps-from", type=Path, default=None, metavar="LOG",
                    help="only add each stage's training steps, read from this command's saved output LOG, to --json "
                         "(a timing made before it kept them)")
    ap.add_argument("--step", action="store_true",
                    help="only measure this machine's benchmark step and print it (what .ci/run reports)")
    ap.add_argument("--made-here", action="store_true",
                    help=f"only record in {MADE_ON} that this machine made the metrics of a `dvc repro` finished here "
                         "without this command (a timed run records it itself); refused while a stage is out of date")
    args = ap.parse_args()
    if args.made_here:
        made = record_made_here(Path.cwd(), None)
        print(f"{MADE_ON}: the metrics of commit {made['commit']}, made on this machine ({made['machine']['date']})")
        return
    if args.step:
        print(f"benchmark step (batch 16, 49 image tokens, {pick_device_type()}): {benchmark_step():.3f} s")
        return
    if args.steps_from is not None:
        if not args.json.is_file():
            raise FrozenbridgeError(f"{args.json}: no timed run to add the step counts to; run without --steps-from")
        if not args.steps_from.is_file():
            raise FrozenbridgeError(f"{args.steps_from}: no such log (the output of this command's timed run)")
        log = StageLog()
        for line in re.split(r"[\r\n]", args.steps_from.read_text(errors="replace")):
            log.read(line)
        saved = json.loads(args.json.read_text())
        if round(sum(log.steps.values()), 1) != saved["training_steps_seconds"]:
            raise FrozenbridgeError(f"{args.steps_from}: its training steps ({sum(log.steps.values()):.1f} s) are not "
                                    f"those of {args.json} ({saved['training_steps_seconds']} s): another run's log")
        saved.update(step_fields(log))
        args.json.write_text(json.dumps(saved, indent=2) + "\n")
        print(f"{sum(log.counts.values())} training steps in {len(log.counts)} stages, added to {args.json}")
        return
    if args.step_after:
        if not args.json.is_file():
            raise SystemExit(f"error: {args.json}: no timed run to add the step to; run without --step-after first")
        saved = json.loads(args.json.read_text())
        saved["benchmark_step_after_seconds"] = round(benchmark_step(), 3)
        args.json.write_text(json.dumps(saved, indent=2) + "\n")
        print(f"benchmark step after the run: {saved['benchmark_step_after_seconds']:.3f} s, in {args.json}")
        return
    step = benchmark_step()
    print(f"benchmark step (batch 16, 49 image tokens): {step:.3f} s", flush=True)
    total, stages, log = run_repro(["--force"] if args.force else [])
    after = benchmark_step()
    by_category: dict[str, float] = {}
    for name, seconds in stages.items():
        by_category[category(name)] = by_category.get(category(name), 0.0) + seconds
    training_steps = sum(log.steps.values())
    out = {"machine": this_machine(),
           "benchmark_step_seconds": round(step, 3), "benchmark_step_after_seconds": round(after, 3),
           "total_seconds": round(total, 1), "stages": stages,
           "categories": {k: round(v, 1) for k, v in by_category.items()},
           **step_fields(log), "stage_count": len(stages)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    shapes_steps = shapes_step_seconds(out)  # the other studies' steps are inside their study's time
    rest = (total - shapes_steps - by_category.get("data", 0.0)
            - sum(v for k, v in by_category.items() if k.endswith(" study")))
    print(f"dvc repro: {total / 60:.1f} min; training steps {training_steps / 60:.1f} min (the shapes study's "
          f"{shapes_steps / 60:.1f}); the shapes study's evaluation and start-ups {rest / 60:.1f} min "
          f"({rest / total:.0%}); benchmark step {step:.2f} s before, {after:.2f} s after. Written to {args.json}")
    try:
        record_made_here(Path.cwd(), args.json)
    except FrozenbridgeError as err:
        print(f"not recorded in {MADE_ON} as this machine's metrics: {err}")


if __name__ == "__main__":
    run_cli(main)
