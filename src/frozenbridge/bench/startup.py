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
- the start-up's levers, each beside what stages did before it, each side in a fresh process three times in turn
  (median): the embedded language model loaded straight into bf16 against loading it in fp32 and casting; the
  training features written plainly encoded and read with one copy, against Parquet's default dictionary encoding
  read through combine_chunks and a second copy.
Rows are written in the one row format (bench/rows.py); `python -m frozenbridge.tools.report` puts them in the results
page.
"""

from __future__ import annotations

import os
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
    """One measurement process: eager or compiled (the cache is whatever $TORCHINDUCTOR_CACHE_DIR holds), or the
    start-up's levers."""
    if mode in LEVERS:
        return lever_child(mode)
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


LEVERS = {"model:cast": ("model", "cast"), "model:straight": ("model", "straight"),
          "features:before": ("features", "before"), "features:plain": ("features", "plain")}
FEATURE_COPIES = "FROZENBRIDGE_BENCH_FEATURE_COPIES"  # the folder of the two copies of the training features


def lever_child(side: str) -> dict:
    """One side of a start-up lever, timed in a fresh process as a stage meets it (torch and transformers imported
    first, outside the time)."""
    import numpy as np
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoModelForCausalLM

    from frozenbridge.core.backbones.language import smollm2_dir
    from frozenbridge.core.feature_cache import load_feature_tensor

    path, _ = smollm2_dir()
    copies = Path(os.environ.get(FEATURE_COPIES, "."))
    start = time.perf_counter()
    if side == "model:cast":  # what stages did before
        AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True).to(torch.bfloat16)
    elif side == "model:straight":
        AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16, local_files_only=True)
    elif side == "features:before":  # Parquet's default dictionary encoding, combine_chunks and a second copy
        feats = pq.read_table(copies / "dictionary.parquet").column("features").combine_chunks().to_numpy_ndarray()
        torch.from_numpy(np.array(feats, copy=True))
    else:
        load_feature_tensor(copies / "plain.parquet")
    return {"seconds": time.perf_counter() - start}


def feature_copies(folder: Path) -> int:
    """The shapes study's training features written twice into `folder`, as stages wrote them before (dictionary.parquet)
    and as they write them now (plain.parquet), a row group as the original's; how many pictures."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from frozenbridge.shapes.paths import FEATURES

    source = pq.ParquetFile(FEATURES / "train.parquet")
    table, size = source.read(), source.metadata.row_group(0).num_rows
    for name, options in (("dictionary", {}), ("plain", {"use_dictionary": ["id"]})):
        with pq.ParquetWriter(folder / f"{name}.parquet", table.schema, **options) as writer:
            for batch in table.to_batches(max_chunksize=size):
                writer.write_table(pa.Table.from_batches([batch], table.schema))
    return table.num_rows


def measure_levers(rounds: int = 3) -> dict:
    """Each side of each lever in a process of its own, the sides in turn `rounds` times (so the page cache and the
    machine's noise fall on both alike); the median of each."""
    with tempfile.TemporaryDirectory(prefix="features-") as tmp:
        pictures = feature_copies(Path(tmp))
        times: dict[str, list[float]] = {side: [] for side in LEVERS}
        for _ in range(rounds):
            for side in LEVERS:
                times[side].append(run_child(NAME, side, 4, env={FEATURE_COPIES: tmp})["seconds"])
    out: dict = {"model": {}, "features": {}, "rows": pictures}
    for side, (part, name) in LEVERS.items():
        out[part][name] = statistics.median(times[side])
    return out


def lever_rows(levers: dict) -> list[dict]:
    model, features = levers["model"], levers["features"]
    return [
        row("start-up lever: the embedded language model loaded straight into bf16", "s", model["straight"],
            "fp32 then cast s", model["cast"]),
        row(f"start-up lever: training features ({levers['rows']:,} pictures) plain, one copy", "s",
            features["plain"], "dictionary, two copies s", features["before"]),
    ]


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
                              ["eager", "compiled", *LEVERS], child, argv)
    import torch

    with tempfile.TemporaryDirectory(prefix="inductor-") as cache:
        try:
            eager = measure("eager", args.steps, Path(cache))
            cold = measure("compiled", args.steps, Path(cache))
            warm = measure("compiled", args.steps, Path(cache))
            levers = measure_levers()
        except subprocess.CalledProcessError as err:
            raise SystemExit(f"a measurement process ({' '.join(err.cmd[4:])}) failed: {last_error(err)}") from None
    info = machine_info(torch.device(eager["device"]), f"{args.steps} question steps a process",
                        f"python -m frozenbridge.bench {NAME}")
    save_rows(args.out, rows_from(eager, cold, warm) + lever_rows(levers), info)
