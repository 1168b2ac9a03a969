"""How long the default shapes training will take on this machine, before running it: a few steps timed.

    python -m frozenbridge.tools.forecast                       # this machine's precision (auto)
    python -m frozenbridge.tools.forecast --precision fp32      # what a CPU without bf16 runs
    python -m frozenbridge.tools.forecast --json bench/forecast-cpu-2core.json --precision auto fp32

It times the training step every stage-1 run takes (the embedded language model, batch 16 captions, the default
connector on the default encoder's 14 x 14 grid: 49 image tokens; the features are random, which the time does not
depend on) as a training stage does before its long part (core.forecast: the first step left out, the median of the
next three) and multiplies it by the steps of every shapes training run params.yaml asks for. Question steps pack
several questions a row and cost less (docs/results.md, benchmarks), so the forecast errs long.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from frozenbridge.bridge.connector import Connector
from frozenbridge.bridge.model import VLM
from frozenbridge.core.device import pick_device
from frozenbridge.core.forecast import TIMED, WARMUP, StepClock, duration
from frozenbridge.core.frozen import frozen_language
from frozenbridge.core.measure import machine
from frozenbridge.core.precision import bf16_choice, describe
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.training.run import study_steps
from frozenbridge.tools.bench import caption_items, train_step


def step_time(params, device: torch.device, precision: str) -> float:
    """Seconds of one stage-1 step, measured as a training stage measures it (core.forecast.StepClock)."""
    lm, bf16 = frozen_language(params.language.name, device, precision)
    torch.manual_seed(0)
    c = params.shapes.connector
    connector = Connector([14, 14, 112], lm.width, c.merge, c.hidden, c.prefix_tokens, c.order, c.norm, c.positions,
                          c.init_scale).to(device)
    step = train_step(VLM(lm, connector, device, bf16), torch.randn(16, 196, 112), caption_items(16))
    clock = StepClock(WARMUP + TIMED + 1)
    while True:
        step()
        if (seconds := clock.lap()) is not None:
            return seconds


def forecast(params, device: torch.device, precision: str) -> dict:
    bf16, why = bf16_choice(precision, device)
    seconds = step_time(params, device, precision)
    steps = study_steps(params)
    return {"precision": precision, "runs_as": describe(bf16), "why": why, "step_seconds": round(seconds, 3),
            "study_steps": steps, "study_seconds": round(seconds * steps, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="the params whose runs are forecast")
    ap.add_argument("--precision", nargs="+", default=["auto"], choices=["auto", "bf16", "fp32"],
                    help="one forecast per precision (default: auto, what the training stages run)")
    ap.add_argument("--device", default="auto", help="auto (CUDA, else Apple's GPU, else CPU), cpu, cuda:N or mps")
    ap.add_argument("--json", type=Path, help="also write the forecasts here")
    args = ap.parse_args()
    params = load_params(args.params)
    device = pick_device(args.device)
    rows = []
    for precision in args.precision:
        row = forecast(params, device, precision)
        rows.append(row)
        print(f"{device}, {row['runs_as']} ({row['why']}): {row['step_seconds']:.2f} s a step, so every shapes "
              f"training run in {args.params} ({row['study_steps']:,} steps) takes about "
              f"{duration(row['study_seconds'])}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(device, False), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
