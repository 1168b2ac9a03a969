"""How long the default shapes training will take on this machine, before running it: a few steps timed.

    python -m frozenbridge.tools.forecast                       # this machine's precision (auto)
    python -m frozenbridge.tools.forecast --precision fp32      # what a CPU without bf16 runs
    python -m frozenbridge.tools.forecast --json bench/forecast-cpu-2core.json --precision auto fp32

It times the training step every stage-1 run takes (params.yaml's language model and connector, batch
shapes.train.batch_size of captions) as a training stage does (core.forecast: the first step left out, the median
of the next three; then the median of steps 5-8, taken instead where the pace moved by more than 25%, as on a
machine busy for a moment at the start) and multiplies it by the steps of every shapes training run params.yaml
asks for (stage 1 at its fewest steps). Once `dvc repro` has made data/shapes, the steps are the stage's own (its cached features, its captions in its
replicate-0 order); before that, stand-ins of the default encoder's shape (14 x 14 x 112, 49 image tokens) and one
caption, which run a little faster. Question steps pack several questions a row and cost less (docs/results.md,
benchmarks), so the forecast errs long.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.core.device import pick_device
from frozenbridge.core.forecast import TIMED, WARMUP, StepClock, duration
from frozenbridge.core.frozen import frozen_language
from frozenbridge.core.measure import machine
from frozenbridge.core.precision import bf16_choice, describe
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.training.run import new_connector, run_seeds, study_steps
from frozenbridge.shapes.training.split_data import caption_batches, load_split
from frozenbridge.bench.parts import caption_items, train_step


def stage1_batches(params, data: Path):
    """(feature shape, features, caption batches): the stage's own where data/shapes exists, else stand-ins."""
    size = params.shapes.train.batch_size
    if (data / "features" / "train.parquet").is_file():
        split = load_split("train", data / "pictures", data / "features", params.vision)
        return split.meta["output_shape"], split.feats, caption_batches(split, run_seeds(params.seed, 0)["captions"],
                                                                        size)
    return [14, 14, 112], torch.randn(size, 196, 112), itertools.repeat(caption_items(size))


def step_time(params, device: torch.device, precision: str, data: Path) -> float:
    """Seconds of one stage-1 step, measured as a training stage measures it (core.forecast.StepClock)."""
    lm, bf16 = frozen_language(params.language.name, device, precision)
    shape, feats, batches = stage1_batches(params, data)
    connector = new_connector(params, shape, lm.width, run_seeds(params.seed, 0)["init"]).to(device)
    vlm = VLM(lm, connector, device, bf16)
    steps = 2 * (WARMUP + TIMED)
    clock = StepClock(steps + 1)  # its second look comes after `steps` steps
    looks = []
    for _ in range(steps):
        train_step(vlm, feats, next(batches))()
        if (pace := clock.lap()) is not None:
            looks.append(pace.seconds)
    return looks[-1]


def forecast(params, device: torch.device, precision: str, data: Path) -> dict:
    bf16, why = bf16_choice(precision, device)
    seconds = step_time(params, device, precision, data)
    steps = study_steps(params)
    return {"precision": precision, "runs_as": describe(bf16), "why": why, "step_seconds": round(seconds, 3),
            "steps_from": "the stage's features and captions" if (data / "features" / "train.parquet").is_file()
            else "stand-in features and one caption",
            "replicates": len(params.replicates), "study_steps": steps, "study_seconds": round(seconds * steps, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.forecast", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="the params whose runs are forecast")
    ap.add_argument("--precision", nargs="+", default=["auto"], choices=["auto", "bf16", "fp32"],
                    help="one forecast per precision (default: auto, what the training stages run)")
    ap.add_argument("--data", type=Path, default=Path("data/shapes"),
                    help="the shapes study's pictures/ and features/, when dvc repro has made them (default "
                         "data/shapes; without them, stand-ins)")
    ap.add_argument("--device", default="auto",
                    help="auto ($FROZENBRIDGE_DEVICE, else CUDA, else Apple's GPU, else CPU), cpu, cuda, cuda:N or mps")
    ap.add_argument("--json", type=Path, help="also write the forecasts here")
    args = ap.parse_args()
    params = load_params(args.params)
    device = pick_device(args.device)
    rows = []
    for precision in args.precision:
        row = forecast(params, device, precision, args.data)
        rows.append(row)
        print(f"{device}, {row['runs_as']} ({row['why']}): {row['step_seconds']:.2f} s a step, so every shapes "
              f"training run in {args.params} ({row['study_steps']:,} steps) takes about "
              f"{duration(row['study_seconds'])}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(device, False), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
