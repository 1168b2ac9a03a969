"""The shapes study's report tables, made from metrics/shapes/ and bench/ (the convergence sweep's, in
convergence_tables.py): every number computed.

`python -m frozenbridge.tools.report` puts them into docs/results.md beside the benchmark tables.
"""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.shapes.data.vocab import SPLITS, TASKS, TESTS
from frozenbridge.shapes.report.analysis_tables import (PROBE_PLACES, _range, capacity_table, image_cost_table,
                                                        paired_analysis_table, perplexity_table, probes_table,
                                                        receipts_table, text_table, wrong_answers_table)
from frozenbridge.shapes.report.convergence_tables import converge_table, heldout_curve_table, model_table, rule_table
from frozenbridge.shapes.report.reading import reading


def data_table(data: dict) -> list[str]:
    rows = ["| split | pictures | count questions | binding questions | leftmost questions |",
            "|---|---:|---:|---:|---:|"]
    for split in SPLITS:
        d = data[split]
        rows.append(f"| {split} | {d['pictures']} | {d['questions_count']} | {d['questions_binding']} "
                    f"| {d['questions_leftmost']} |")
    return rows


def color_kind_table(counts: dict) -> list[str]:
    kinds = list(next(iter(counts.values())))
    rows = ["| training shapes | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    rows += [f"| {color} | " + " | ".join(str(counts[color][k]) for k in kinds) + " |" for color in counts]
    return rows


def encode_table(enc: dict) -> list[str]:
    size = sum(enc["bytes"].values())
    return ["| encoder | output shape | stored as | pictures | feature files | per picture |",
            "|---|---|---|---:|---:|---:|",
            f"| {enc['encoder']} | {' x '.join(map(str, enc['output_shape']))} | {enc['dtype']} | {enc['pictures']} "
            f"| {size / 1e6:.1f} MB | {enc['bytes_per_picture'] / 1e3:.1f} kB |"]


def stage1_table(main: dict, controls: dict) -> list[str]:
    rows = ["| caption recipe (stage 1), captions | right | blank | wrong | none | gap | distinct captions |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for test in TESTS:
        m, c = main["caption"][test], controls["caption"][test]["caption"]
        rows.append(f"| {test} pairs | {_range(m['caption']['right'])} | {c['blank']['median']:g} | "
                    f"{c['wrong']['median']:g} | {c['none']['median']:g} | {_range(m['caption']['gap'])} | "
                    f"{_range(m['distinct_captions'])} |")
    return rows


def recipe_table(main: dict) -> list[str]:
    rows = ["| recipe | task | seen: right | seen: gap | held-out: right | held-out: gap |",
            "|---|---|---:|---:|---:|---:|"]
    for recipe, tests in main.items():
        for task in TASKS:
            if task in tests["seen"]:
                rows.append(f"| {recipe} | {task} | {_range(tests['seen'][task]['right'])} | "
                            f"{_range(tests['seen'][task]['gap'])} | {_range(tests['heldout'][task]['right'])} | "
                            f"{_range(tests['heldout'][task]['gap'])} |")
    return rows


def paired_table(reps: dict, a: str = "qa", b: str = "caption_qa") -> list[str]:
    """Two recipes replicate by replicate (paired: same initial connector, same questions), every task and test."""
    if a not in reps or b not in reps:
        return []
    rows = [f"{a} vs {b}, replicate by replicate (right-picture exact match, %, from "
            "`metrics/shapes/replicates.json`):", "",
            f"| test pairs | task | replicate | {a} | {b} | {b} − {a} |", "|---|---|---:|---:|---:|---:|"]
    for test in ("heldout", "seen"):
        for task in ("binding", "leftmost", "count"):
            ra, rb = reps[a].get(test, {}).get(task, {}), reps[b].get(test, {}).get(task, {})
            for r in sorted(set(ra) & set(rb), key=int):
                rows.append(f"| {test} | {task} | {r} | {ra[r]['right']:g} | {rb[r]['right']:g} | "
                            f"{rb[r]['right'] - ra[r]['right']:+.4g} |")
    return rows + [""]


def shapes_results(metrics: Path, bench: Path, params: dict | None) -> tuple[list[str], list[str]]:
    """(the results tables and the reading from metrics/shapes/, the convergence tables from bench/)."""
    metrics = metrics / "shapes"
    parts: list[str] = []
    data, enc = read_json_if_present(metrics / "data.json"), read_json_if_present(metrics / "encode.json")
    if data:
        parts += ["Generated data (`metrics/shapes/data.json`):", "", *data_table(data), "",
                  *color_kind_table(data["train_color_kind"]), ""]
    if enc:
        parts += ["Cached features (`metrics/shapes/encode.json`):", "", *encode_table(enc), ""]
    scores, controls = read_json_if_present(metrics / "scores.json"), read_json_if_present(metrics / "controls.json")
    pairs = read_json_if_present(metrics / "paired.json")
    if scores and controls:
        parts += ["Exact match, % (median [min–max] over replicates; gap = right − max(blank, wrong, none)) from "
                  "`metrics/shapes/scores.json` and `metrics/shapes/controls.json`:", "",
                  *(stage1_table(scores, controls) if "caption" in scores else []), "", *recipe_table(scores), ""]
        reps = read_json_if_present(metrics / "replicates.json")
        parts += [*paired_table(reps or {}), *reading(scores, controls, reps, pairs)]
    parts += paired_analysis_table(pairs or {})
    wrong = read_json_if_present(metrics / "wrong_answers.json") or {}
    parts += wrong_answers_table(wrong)
    if wrong and data:
        parts += ["Beside it, the training colors by kind (a kind's two largest are its \"common\" colors):", "",
                  *color_kind_table(data["train_color_kind"]), ""]
    parts += probes_table(read_json_if_present(metrics / "probes.json") or {})
    text = read_json_if_present(metrics / "text.json") or {}
    parts += text_table(text)
    parts += image_cost_table(text.get("image_cost"), read_json_if_present(bench / "cpu-2core.json"))
    parts += capacity_table(read_json_if_present(metrics / "capacity.json") or {})
    parts += receipts_table(read_json_if_present(metrics / "receipts.json") or {})
    sweep: list[str] = []
    if (converge := read_json_if_present(bench / "converge.json")) is not None:
        sweep += [*converge_table(converge, params), ""]
    if (frontier := read_json_if_present(bench / "converge-heldout.json")) is not None:
        sweep += heldout_curve_table(frontier)
    if (models := read_json_if_present(bench / "converge-models.json")) is not None:
        sweep += [*model_table(models), ""]
        if rule := rule_table(models, params):
            sweep += [*rule, ""]
    return parts, sweep


def experiment_results(folder: Path) -> list[str]:
    """An on-demand experiment kept in results/<name>/ (by `python -m frozenbridge.tools.snapshot`, or by the tool
    its command names): its recipes, paired replicates, perplexity, probes, whichever it kept."""
    exp = read_json_if_present(folder / "experiment.json")
    if exp is None:
        return []
    metrics = folder / "metrics" / "shapes"
    parts = [f"**On-demand experiment `{exp['name']}`** (`{exp['command']}` on commit {str(exp['commit'])[:7]}; "
             f"its metrics kept in `results/{folder.name}/`). "
             + (f"{exp['note'][0].upper()}{exp['note'][1:].rstrip('.')}." if exp.get("note") else ""), ""]
    if (scores := read_json_if_present(metrics / "scores.json")) is not None:
        parts += ["Exact match, %:", "", *recipe_table(scores), ""]
    parts += paired_analysis_table(read_json_if_present(metrics / "paired.json") or {})
    if text := read_json_if_present(metrics / "text.json"):
        parts += [*perplexity_table(text), ""]
    if probes := read_json_if_present(metrics / "probes.json"):
        parts += probes_table(probes, f"results/{folder.name}/metrics/shapes/probes.json",
                              PROBE_PLACES if set(probes["places"]) <= set(PROBE_PLACES) else ())
    return parts


BENCH_FILES = ("converge.json", "converge-heldout.json", "converge-models.json")  # bench/ files these tables read

# The reference study (SigLIP-B/16 + Qwen2.5-0.5B, three seeds, 400 caption + 400 question steps, 120 pictures a caption
# test, 100 questions a task; the five-seed follow-up for the paired comparison), beside metrics/headline.json's keys
HEADLINE_REFERENCE = {
    "caption_exact_seen": "75.8% (91 of 120)", "caption_exact_heldout": "52.5% (63 of 120)",
    "caption_qa_binding_gap_seen": "69", "caption_qa_leftmost_gap_seen": "70",
    "caption_qa_binding_heldout": "76% (three seeds: 40%, 76%, 81%)",
    "qa_binding_heldout": "40% (three seeds: 22%, 40%, 77%)",
    "caption_qa_ahead_heldout_binding": "5 of 5 (five-seed follow-up)",
}
