"""Compiled decoder layers with an empty and a warm inductor cache, and a stage's start-up, against eager.

    python -m frozenbridge.bench startup               # bench/levers-cpu-2core.json (needs shapes_encode's output)
    python -m frozenbridge.bench startup --steps 20    # shorter

The default run's time levers, each measured against what the run did before it, in one run on this machine.

Every measurement runs in a process of its own, as a stage does (a fresh Python, the embedded backbones loaded, the
shapes study's cached training features read), on the qa recipe's first `--steps` question steps:
- compiled decoder layers (shapes.train.compile: auto): eager; compiled with an empty inductor cache, what the first
  question stage on a machine pays; compiled again with the cache the first one filled, what every later stage and
  replicate pays. Rows: the step (median after the first two), the first step (the compile, or loading it from the
  cache), and the process from start to last step.
- a stage's start-up: the seconds before its first step, split into Python with its imports, the frozen language
  model loaded and cast, and the features read; beside them a step, to say how many steps a start-up costs.
Rows are written in the one row format (bench/rows.py); `python -m frozenbridge.tools.report` puts them in the results
page.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from frozenbridge.bench.processes import last_error, process_bench_args, run_child
from frozenbridge.bench.rows import machine_info, row, save_rows  # these two import the standard library alone

T0 = time.perf_counter()  # before any import below: the child's start-up is measured from here

NAME = "startup"
DEFAULT_OUT = Path("bench/levers-cpu-2core.json")


def child(mode: str, steps: int) -> dict:
    """One measurement process: eager or compiled (the cache is whatever $TORCHINDUCTOR_CACHE_DIR holds)."""
    imported = time.perf_counter()
    import torch

    from frozenbridge.bridge.model import VLM
    from frozenbridge.bridge.step import training_step
    from frozenbridge.core.precision import compile_layers
    from frozenbridge.shapes.params import load_params
    from frozenbridge.shapes.paths import FEATURES, PICTURES
    from frozenbridge.shapes.training.run import new_connector, run_seeds
    from frozenbridge.shapes.training.split_data import load_split, pictures_per_batch, question_batches
    from frozenbridge.shapes.training.start import setup

    params = load_params("params.yaml")
    imported = time.perf_counter()
    device, bf16, lm = setup(params)
    loaded = time.perf_counter()
    data = load_split("train", PICTURES, FEATURES, params.vision)
    read = time.perf_counter()
    if mode == "compiled":
        compile_layers(lm.model)
    seeds = run_seeds(params.seed, 0)
    connector = new_connector(params, data.meta["output_shape"], lm.width, seeds["init"]).to(device)
    vlm = VLM(lm, connector, device, bf16)
    optimizer = torch.optim.AdamW(connector.parameters(), lr=params.shapes.train.lr)
    batches = question_batches(data, seeds["questions"], params.shapes.train.batch_size)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        training_step(vlm, next(batches), data.feats, optimizer)
        times.append(time.perf_counter() - start)
    size = params.shapes.train.batch_size
    return {"batch": f"{pictures_per_batch(data, size)} pictures with about {size} questions",
            "imports": imported - T0, "model": loaded - imported, "features": read - loaded, "times": times,
            "process": time.perf_counter() - T0, "device": str(device)}


def measure(mode: str, steps: int, cache: Path) -> dict:
    wall = time.perf_counter()
    result = run_child(NAME, mode, steps, env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    result["wall"] = time.perf_counter() - wall  # the interpreter's own start included
    return result


def rows_from(eager: dict, cold: dict, warm: dict) -> list[dict]:
    def step(r: dict) -> float:
        return statistics.median(r["times"][2:])

    n = len(eager["times"])
    start_up = eager["imports"] + eager["model"] + eager["features"]
    return [
        row(f"question step (qa, {eager['batch']}): compiled layers", "compiled", step(warm), "eager", step(eager)),
        row("first question step: compile, empty inductor cache", "s", cold["times"][0], "eager first step s",
            eager["times"][0], ratio=False),
        row("first question step: compile loaded from the cache", "s", warm["times"][0], "eager first step s",
            eager["times"][0], ratio=False),
        row(f"process, start to step {n}: compiled, the cache warm", "s", warm["wall"], "eager s", eager["wall"]),
        row(f"process, start to step {n}: compiled, the cache empty", "s", cold["wall"], "eager s", eager["wall"]),
        row("stage start-up: Python and imports", "s", eager["imports"], "of the start-up",
            eager["imports"] / start_up, ratio=False),
        row("stage start-up: language model loaded and cast", "s", eager["model"], "of the start-up",
            eager["model"] / start_up, ratio=False),
        row("stage start-up: training features read", "s", eager["features"], "of the start-up",
            eager["features"] / start_up, ratio=False),
        row("stage start-up, before the first step", "s", start_up, "eager question steps it costs",
            start_up / step(eager), ratio=False),
    ]


def main(argv: list[str] | None = None) -> None:
    args = process_bench_args(NAME, __doc__, 40, "question steps each process trains", DEFAULT_OUT,
                              ["eager", "compiled"], child, argv)
    import torch

    with tempfile.TemporaryDirectory(prefix="inductor-") as cache:
        try:
            eager = measure("eager", args.steps, Path(cache))
            cold = measure("compiled", args.steps, Path(cache))
            warm = measure("compiled", args.steps, Path(cache))
        except subprocess.CalledProcessError as err:
            raise SystemExit(f"a measurement process ({' '.join(err.cmd[4:])}) failed: {last_error(err)}") from None
    info = machine_info(torch.device(eager["device"]), f"{args.steps} question steps a process",
                        f"python -m frozenbridge.bench {NAME}")
    save_rows(args.out, rows_from(eager, cold, warm), info)
