"""The connector comparison's table (results/connectors/, made by `python -m frozenbridge.tools.connectors`): every
design beside the MLP of the default run, on the same paired replicates. Captions are stage 1's runs, the questions
caption_qa's; each cell is the median exact match with [lowest–highest] over the replicates and the median gap
(right minus the best control). The step ratio comes from bench/designs-cpu-2core.json, measured in one run."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present

TASKS = (("caption", "caption"), ("count", "caption_qa"), ("binding", "caption_qa"), ("leftmost", "caption_qa"))
TESTS = (("seen", "seen"), ("heldout", "held-out"))


def _cell(per_replicate: dict | None) -> str:
    if not per_replicate:
        return "—"
    right = [r["right"] for r in per_replicate.values()]
    gap = statistics.median(r["gap"] for r in per_replicate.values())
    return f"{statistics.median(right):.4g} [{min(right):.4g}–{max(right):.4g}]; gap {gap:.4g}"


def step_ratio(bench: dict | None, setting: str) -> str:
    """The MLP's question step over this design's, from the designs benchmark (above 1: this design is faster)."""
    for row in (bench or {}).get("rows", []):
        if row["measure"].startswith(f"{setting} (") and row["measure"].endswith(": question step"):
            return f"{row['ratio']:.2f}×"
    return "—"


def designs(root: Path) -> dict[str, tuple[dict, Path]]:
    """{setting: (its design.json, its metrics/shapes folder)}: the MLP's (the default run's metrics) first."""
    kept = root / "results" / "connectors"
    out = {}
    for folder in sorted(kept.glob("*/"), key=lambda f: (f.name != "mlp", f.name)):
        if (facts := read_json_if_present(folder / "design.json")) is not None:
            out[folder.name] = (facts, root / "metrics" / "shapes" if folder.name == "mlp"
                                else folder / "metrics" / "shapes")
    return out


def connectors_table(root: Path) -> list[str]:
    found = designs(root)
    if set(found) <= {"mlp"}:
        return []
    bench = read_json_if_present(root / "bench" / "designs-cpu-2core.json")
    head = " | ".join(f"{task} ({'stage 1' if recipe == 'caption' else recipe})" for task, recipe in TASKS)
    out = ["Each design through stage 1 and caption_qa on the same paired replicates (`python -m "
           "frozenbridge.tools.connectors`; the MLP's runs are the default run's). Exact match %, median "
           "[lowest–highest] over the replicates, and the median gap:", "",
           f"| design | trained parameters | image tokens | question step, MLP's / its | minutes | pairs | {head} |",
           "|---|---:|---:|---:|---:|---|" + "---|" * len(TASKS)]
    for setting, (facts, metrics) in found.items():
        reps = read_json_if_present(metrics / "replicates.json") or {}
        minutes = "—" if facts.get("minutes") is None else f"{facts['minutes']:.0f}"
        for i, (test, label) in enumerate(TESTS):
            cells = [_cell(reps.get(recipe, {}).get(test, {}).get(task)) for task, recipe in TASKS]
            lead = (f"{setting} | {facts['connector_params']:,} | {facts['image_tokens']} | "
                    f"{'1.00×' if setting == 'mlp' else step_ratio(bench, setting)} | {minutes}") if i == 0 \
                else " | | | |"
            out.append(f"| {lead} | {label} | {' | '.join(cells)} |")
    return out + [""]
