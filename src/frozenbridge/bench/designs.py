"""Each connector design's training step and its FLOPs, measured against the MLP's in one run on this machine.

    python -m frozenbridge.bench designs             # bench/designs-cpu-2core.json (needs shapes_encode's output)
    python -m frozenbridge.bench designs --steps 10  # shorter

Every design of the comparison's settings, and the MLP, runs in a process of its own, as a stage does: the embedded
backbones, the shapes study's cached training features, `--steps` caption steps (stage 1's batches) and `--steps`
question steps (caption_qa's packed batches), eager (no compiled layers, so the designs are compared alike). Rows:
the median step of each phase after the first two, its ratio against the MLP's, and the floating-point operations
of one step of each (forward and backward, counted by torch.utils.flop_counter from the operands' shapes). The
codebook's centroids are the first `codes` merged training vectors instead of stage shapes_codebook's k-means: a
step's cost does not depend on where the centroids lie.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

import torch

from frozenbridge.bench.processes import last_error, process_bench_args, run_child
from frozenbridge.bench.rows import machine_info, row, save_rows

NAME = "designs"
DEFAULT_OUT = Path("bench/designs-cpu-2core.json")
MLP = "mlp"


def child(setting: str, steps: int) -> dict:
    """One measurement process: `steps` caption steps, then `steps` question steps, timed; one of each counted."""
    import time

    from torch.utils.flop_counter import FlopCounterMode

    from frozenbridge.bridge.connector import merge_patches
    from frozenbridge.bridge.model import VLM, decoder_layers
    from frozenbridge.bridge.step import training_step
    from frozenbridge.core.config import read_params_file
    from frozenbridge.shapes.paths import FEATURES, PICTURES
    from frozenbridge.shapes.training.recipes import RECIPES, STAGE1_PHASE
    from frozenbridge.shapes.training.run import batches_for, new_connector, run_seeds
    from frozenbridge.shapes.training.split_data import load_split
    from frozenbridge.shapes.sweeps.converge_settings import apply_overrides
    from frozenbridge.shapes.training.start import setup
    from frozenbridge.comparison.settings import EQUAL_SETTINGS

    values = {"connector.design": MLP} if setting == MLP else EQUAL_SETTINGS[setting]
    params = apply_overrides(read_params_file("params.yaml"), values)
    connector_params = params.shapes.connector
    device, bf16, lm = setup(params)
    data = load_split("train", PICTURES, FEATURES, params.vision)
    shape, c = data.meta["output_shape"], connector_params
    centroids = None
    if c.design == "codebook":
        k = c.codebook
        merged = merge_patches(data.feats.float(), tuple(shape[:2]), k.merge, k.order)
        centroids = merged.reshape(-1, merged.shape[-1])[:k.codes].clone()
    seeds = run_seeds(params.seed, 0)
    connector = new_connector(params, shape, lm.width, seeds["init"], layers=len(decoder_layers(lm.model)),
                              centroids=centroids).to(device)
    vlm = VLM(lm, connector, device, bf16)
    optimizer = torch.optim.AdamW(connector.parameters(), lr=params.shapes.train.lr)
    out = {"params": connector.n_params, "image_tokens": connector.n_out, "device": str(device)}
    for phase_name, phase in (("caption", STAGE1_PHASE), ("question", RECIPES["caption_qa"].phases[-1])):
        batches = batches_for(phase, data, seeds, params)
        with FlopCounterMode(display=False) as counter:
            training_step(vlm, next(batches), data.feats, optimizer)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            training_step(vlm, next(batches), data.feats, optimizer)
            times.append(time.perf_counter() - start)
        out[phase_name] = {"step": statistics.median(times[2:]), "flops": counter.get_total_flops()}
    return out


def rows_from(results: dict[str, dict]) -> list[dict]:
    mlp = results[MLP]
    rows = []
    for setting, r in results.items():
        label = f"{setting} ({r['params']:,} parameters, {r['image_tokens']} image tokens)"
        for phase in ("caption", "question"):
            rows.append(row(f"{label}: {phase} step", "s", r[phase]["step"], "mlp s", mlp[phase]["step"]))
        rows.append(row(f"{label}: question step FLOPs", "GFLOP", r["question"]["flops"] / 1e9, "mlp GFLOP",
                        mlp["question"]["flops"] / 1e9))
    return rows


def main(argv: list[str] | None = None) -> None:
    from frozenbridge.comparison.settings import EQUAL_SETTINGS

    args = process_bench_args(NAME, __doc__, 20, "steps of each phase a process trains", DEFAULT_OUT,
                              [MLP, *EQUAL_SETTINGS], child, argv)
    results = {}
    for setting in (MLP, *EQUAL_SETTINGS):
        try:
            results[setting] = run_child(NAME, setting, args.steps)
        except subprocess.CalledProcessError as err:
            raise SystemExit(f"the {setting} measurement failed: {last_error(err)}") from None
        print(f"{setting}: measured", file=sys.stderr)
    info = machine_info(torch.device(results[MLP]["device"]), f"{args.steps} steps a phase, eager",
                        f"python -m frozenbridge.bench {NAME}")
    save_rows(args.out, rows_from(results), info)
