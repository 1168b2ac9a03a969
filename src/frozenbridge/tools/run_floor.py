"""The default run's training at its floor: how long its training steps would take if each were its matrix products
alone, on the machine that timed the run.

    python -m frozenbridge.tools.run_floor    # bench/repro.json against bench/floor-*.json of the same CPU

A timed `dvc repro` (tools.repro_timing, bench/repro.json) keeps how many steps each training stage took; `bench
floor` (bench/floor-*.json, a file a machine) keeps each step's floor, its matrix products replayed alone. Where both
come from the same CPU, the steps times the floor say what no overhead cut can go below at these settings: a time
budget under it needs fewer or smaller steps, or a faster machine, not a faster step. The stages counted are the
shapes study's stage 1 and its question recipes, whose steps the floor bench measures at the run's own sizes; other
stages that log their steps (the audit's training, a LoRA recipe) are named as left out, and the studies whose loops
log no step count (one-token, digits, retrieval) are not in the count at all.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.stage import run_cli

# a training stage (its name before "@") and its recipe -> the floor bench's step whose floor it takes
STEP_OF = (("shapes_stage1", None, "caption step, MLP,"),
           ("shapes_train", "qa", "question step, MLP,"),
           ("shapes_train", "caption_qa", "question step, MLP,"))


def _recipe(stage: str) -> str | None:
    """shapes_train@caption_qa-3 -> caption_qa; a stage with no recipe in its name -> None."""
    _, _, item = stage.partition("@")
    recipe, dash, replicate = item.rpartition("-")
    return recipe if dash and replicate.isdigit() else None


def floor_seconds(saved: dict) -> dict[str, float]:
    """Each measured step's floor in seconds, by the start of its row's name (the compiled row where there is one:
    the pipeline's own step; both rows time the same products)."""
    floors: dict[str, float] = {}
    for step in dict.fromkeys(step for _, _, step in STEP_OF):  # each step once, in order
        rows = [r for r in saved["rows"] if r["measure"].startswith(step) and r["measure"].endswith("step / floor")]
        rows.sort(key=lambda r: "compiled layers" not in r["measure"])
        if rows:
            floors[step] = rows[0]["a_value"]
    return floors


def same_machine(repro: dict, floor: dict) -> bool:
    a, b = repro["machine"], floor["machine"]
    return all(a.get(key) is not None and a.get(key) == b.get(key) for key in ("cpu_model", "bf16_path"))


def run_floor(repro: dict, bench: Path) -> dict | None:
    """{"studies": {study: {"floor_seconds", "steps_seconds", "stages"}}, "left_out", "floor_file"} for the timed
    run against the floor file of its own machine: per study (the stage name's prefix), the counted stages' steps
    times their step's floor, and the seconds the same stages spent inside their steps. None when the run kept no
    step counts or no floor file is from its CPU."""
    counts = repro.get("training_step_counts")
    if not counts:
        return None
    match = next((p for p in sorted(bench.glob("floor-*.json")) if same_machine(repro, json.loads(p.read_text()))),
                 None)
    if match is None:
        return None
    floors = floor_seconds(json.loads(match.read_text()))
    seconds = repro.get("training_steps_by_stage", {})
    studies: dict[str, dict] = {}
    left_out = []
    for stage, steps in counts.items():
        step = next((s for name, recipe, s in STEP_OF if stage.split("@")[0] == name
                     and (recipe is None or _recipe(stage) == recipe)), None)
        if step is None or step not in floors:
            left_out.append(stage)
            continue
        study = studies.setdefault(stage.split("_")[0], {"floor_seconds": 0.0, "steps_seconds": 0.0, "stages": []})
        study["floor_seconds"] += steps * floors[step]
        study["steps_seconds"] += seconds.get(stage, 0.0)
        study["stages"].append(stage)
    return {"studies": studies, "left_out": left_out, "floor_file": match.name}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.run_floor", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repro", type=Path, default=Path("bench/repro.json"), help="the timed run (tools.repro_timing)")
    ap.add_argument("--bench", type=Path, default=Path("bench"), help="the folder of the floor files (bench floor)")
    args = ap.parse_args(argv)
    if not args.repro.is_file():
        raise FrozenbridgeError(f"{args.repro}: no timed run; python -m frozenbridge.tools.repro_timing writes it")
    repro = json.loads(args.repro.read_text())
    found = run_floor(repro, args.bench)
    if found is None:
        raise FrozenbridgeError(f"{args.repro}: no step counts, or no {args.bench}/floor-*.json from its CPU "
                                f"({repro['machine'].get('cpu_model')}); run bench floor on that machine")
    for study, s in found["studies"].items():
        print(f"{study}: {len(s['stages'])} stages, {s['steps_seconds'] / 60:.1f} min inside their steps, "
              f"{s['floor_seconds'] / 60:.1f} min at the floor ({s['steps_seconds'] / s['floor_seconds']:.2f}x), "
              f"floors from {args.bench / found['floor_file']}")
    if found["left_out"]:
        print(f"left out (no floor at their sizes): {', '.join(found['left_out'])}")


if __name__ == "__main__":
    run_cli(main)
