"""The README's and results page's "where it runs" table: the default training's forecast in bf16 and fp32
(`python -m frozenbridge.tools.forecast`), the reference's sizes tried here (`python -m frozenbridge.bench
reference`) and the quick look (`frozenbridge quick-look`, its quick/scores.json copied to
bench/quick-look.json), from the JSON those commands wrote."""

from __future__ import annotations

import re
from pathlib import Path

from frozenbridge.core.forecast import duration
from frozenbridge.core.summary import read_json_if_present

FORECAST, REFERENCE, QUICK = "forecast-cpu-2core.json", "reference-cpu-2core.json", "quick-look.json"
FILES = (FORECAST, REFERENCE, QUICK)  # rendered here, not as generic benchmark tables
REPLICATE_STAGE = re.compile(r"@(?:.+-)?(\d+)$")  # shapes_train@qa-3, onetoken_train@3: a stage of replicate 3


def stage_replicate(name: str) -> int | None:
    """The replicate a stage belongs to (its name ends in it), None for a stage every replicate shares."""
    match = REPLICATE_STAGE.search(name)
    return int(match.group(1)) if match else None


def category(stage: str) -> str:
    """The kind of a stage, for the time split: the shapes study's data, training, evaluation, summaries and figures;
    every other study as a whole."""
    name = stage.split("@")[0]
    study, _, job = name.partition("_")
    if study in ("digits", "retrieval", "onetoken", "audit"):
        return f"{study} study"
    return {"data": "data", "encode": "data", "stage1": "training", "train": "training",
            "evaluate": "evaluation"}.get(job if study == "shapes" else "", "summaries and figures")


def shapes_step_seconds(repro: dict) -> float:
    """Seconds a timed `dvc repro` spent inside the shapes study's training steps: its training stages' own steps
    (the audit's are its study's); an older timing without them per stage gives every step it counted."""
    by_stage = repro.get("training_steps_by_stage")
    if not by_stage:
        return repro["training_steps_seconds"]
    return sum(v for k, v in by_stage.items() if category(k) == "training")


def timed_replicates(repro: dict) -> set[int]:
    """The replicates a timed `dvc repro` (bench/repro.json) ran."""
    return {r for name in repro["stages"] if (r := stage_replicate(name)) is not None}


def has_bf16(machine: dict) -> bool:
    """Whether the CPU of a timing's `machine` record (bench/repro.json) had bf16 instructions: its `bf16_path`
    (tools.repro_timing) is not "none ..."."""
    return not machine.get("bf16_path", "none").startswith("none")


def _forecast_rows(saved: dict, repro: dict | None) -> list[str]:
    rows = {r["precision"]: r for r in saved["rows"]}
    out = []
    for precision, r in rows.items():
        what = ("the default shapes training, in fp32: what a CPU without bf16 runs" if r["runs_as"] == "fp32"
                else f"the default shapes training, {r['runs_as']}")
        ratio = ""
        if r["runs_as"] == "fp32" and "auto" in rows and rows["auto"]["runs_as"] != "fp32":
            ratio = f" ({r['step_seconds'] / rows['auto']['step_seconds']:.1f}× the bf16 step)"
        command = "tools.forecast" + ("" if precision == "auto" else f" --precision {precision}")
        command = f"`{command}`, {saved['machine']['date']}"
        measured = ""
        ran_bf16 = repro is not None and has_bf16(repro["machine"])
        same_runs = repro is not None and r.get("replicates") == len(timed_replicates(repro))
        if ran_bf16 and same_runs and r["runs_as"] != "fp32":
            measured = (f" (the last `dvc repro` spent {duration(shapes_step_seconds(repro))} inside them: "
                        "question steps run packed and cost less)")
        out.append(f"| {what} ({command}) | {r['step_seconds']:.2f} s{ratio} | its {r['study_steps']:,} steps "
                   f"about {duration(r['study_seconds'])}{measured} |")
    return out


def _reference_row(saved: dict) -> str:
    study, memory = saved["study"], saved["memory"]
    step = saved["runs"]["stage1"]["median_step_s"]
    ref = study["reference_step_s"]["stage1"]
    return (f"| the reference's sizes: random SigLIP-B/16 + Qwen2.5-0.5B-sized, a stage-1 step "
            f"(`bench reference`, {saved['machine']['date']}) | {step:.2f} s (the reference's Mac: {ref:g} s; {step / ref:.2f}×) | the "
            f"full reference study's training about {duration(study['seconds'])} (with the reference's own step "
            f"times: {duration(study['reference_seconds'])}); peak memory {memory['peak_rss_mb'] / 1024:.1f} GB |")


def _quick_row(saved: dict) -> str:
    s, bench = saved["stage_seconds"], saved.get("benchmark_step_seconds")
    day = f"; that day's benchmark step {bench:.2f} s" if bench else ""
    return (f"| the quick look: {saved['steps']} caption steps on {saved['train_pictures']:,} pictures "
            f"(`frozenbridge quick-look`, {saved['machine']['date']}{day}) | {s['train'] / saved['steps']:.2f} s "
            f"(the run's checks included) | {duration(saved['seconds'])} in all, of which drawing and encoding "
            f"{duration(s['pictures'] + s['encode'])}; {saved['exact']} of {saved['of']} test captions exactly right |")


def where_it_runs(bench: Path) -> list[str]:
    """The table, or nothing when no command has written its JSON."""
    forecast, reference, quick = (read_json_if_present(bench / name) for name in FILES)
    repro = read_json_if_present(bench / "repro.json")
    if forecast is None and reference is None and quick is None:
        return []
    devices = {saved["machine"]["device"] for saved in (forecast, reference, quick) if saved is not None}
    rows = [f"Time a step and what it comes to, measured on {', '.join(sorted(devices))} (each row names the module of `frozenbridge` that measured "
            "it, run with `python -m`, and the day it ran):", "",
            "| what | a training step | comes to |", "|---|---:|---|"]
    rows += _forecast_rows(forecast, repro) if forecast else []
    rows += [_reference_row(reference)] if reference else []
    rows += [_quick_row(quick)] if quick else []
    return rows
