"""Markdown tables from metrics/, written into README.md between marker comments, so its numbers stay computed.

`python -m frozenbridge.report` rewrites the block; `--check` exits 1 when the README is out of date.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.digits.tables import digits_results
from frozenbridge.onetoken.tables import onetoken_results
from frozenbridge.retrieval.tables import retrieval_results
from frozenbridge.shapes.tables import BENCH_FILES, experiment_results, shapes_results

START, END = "<!-- results:start (python -m frozenbridge.report) -->", "<!-- results:end -->"
OTHER_STUDIES = ("digits", "retrieval", "onetoken")  # timed apart from the shapes study
STUDY_LABELS = {"onetoken": "one-token"}



def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def _step_times(saved: dict) -> str:
    before, after = saved["benchmark_step_seconds"], saved.get("benchmark_step_after_seconds")
    if after is None:
        return f"{before:.2f} s"
    return f"{before:.2f} s before the run and {after:.2f} s after it"


def _other_studies(categories: dict, total: float) -> str:
    others = {name: categories[f"{name} study"] for name in OTHER_STUDIES if f"{name} study" in categories}
    if not others:
        return ""
    listed = ", ".join(f"the {STUDY_LABELS.get(name, name)} study {_minutes(seconds)}" for name, seconds in others.items())
    return f"; {listed}, so the shapes study {_minutes(total - sum(others.values()))}"


def repro_time(saved: dict) -> list[str]:
    """`python -m frozenbridge.repro_timing`: the default run's wall time, by kind of stage, and its machine."""
    m, c, total = saved["machine"], saved["categories"], saved["total_seconds"]
    steps = saved["training_steps_seconds"]
    rest = total - steps - c.get("data", 0.0) - sum(c.get(f"{name} study", 0.0) for name in OTHER_STUDIES)
    return [f"**Time** (`python -m frozenbridge.repro_timing`, {m['date']}): `dvc repro` of every stage took "
            f"**{_minutes(total)}** on a {m['cpu']} {m['device'].upper()} machine (torch {m['torch']}) whose benchmark "
            f"step (batch 16 captions, 49 image tokens) took {_step_times(saved)}. Data "
            f"(generate, encode) {_minutes(c.get('data', 0.0))}; training stages {_minutes(c.get('training', 0.0))}, "
            f"of which {_minutes(steps)} inside training steps; evaluation {_minutes(c.get('evaluation', 0.0))}; "
            f"summaries and figures {_minutes(c.get('summaries and figures', 0.0))}"
            f"{_other_studies(c, total)}. Evaluation and the "
            f"{saved['stage_count']} stage start-ups together: {_minutes(rest)}, {rest / total:.0%} of the run. "
            "On another machine, scale by the ratio of benchmark steps (`python -m frozenbridge.repro_timing` "
            "prints it first).", ""]


def bench_table(saved: dict) -> list[str]:
    m = saved["machine"]
    rows = [f"Benchmark (`python -m frozenbridge.bench`, {m['mode']} mode, {m['device']}, torch {m['torch']}, "
            f"{m['date']}):", "", "| measure | a | b | b / a |", "|---|---:|---:|---:|"]
    for r in saved["rows"]:
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.0%}" if r.get("fraction") else f"{r['ratio']:.2f}×"
        rows.append(f"| {r['measure']} | {r['a']} {r['a_value']:.4g} | {r['b']} {r['b_value']:.4g} | {ratio} |")
    return rows


def gpu_table(saved: dict) -> list[str]:
    """The rows of `python -m frozenbridge.bench_gpu` (one value each)."""
    m = saved["machine"]
    rows = [f"GPU figures (`python -m frozenbridge.bench_gpu`, {m['device']}, {m['models']}, torch {m['torch']}, "
            f"{m['date']}):", "", "| measure | value |", "|---|---:|"]
    rows += [f"| {r['measure']} | {r['value']:.4g} {r['unit']} |" for r in saved["rows"]]
    return rows

def render(metrics: Path) -> str:
    bench = metrics.parent / "bench"
    params_path = metrics.parent / "params.yaml"
    params = read_yaml(params_path.read_text()) if params_path.is_file() else None
    results, sweep = shapes_results(metrics, bench, params)
    parts = list(results)
    for folder in sorted((metrics.parent / "results").glob("*/")):
        parts += experiment_results(folder)
    if (repro := read_json_if_present(bench / "repro.json")) is not None:
        parts += repro_time(repro)
    parts += sweep
    parts += digits_results(metrics)
    parts += retrieval_results(metrics)
    parts += onetoken_results(metrics)
    for path in sorted(bench.glob("*.json")):
        if path.name != "repro.json" and path.name not in BENCH_FILES:
            saved = json.loads(path.read_text())
            parts += [*(gpu_table(saved) if "models" in saved["machine"] else bench_table(saved)), ""]
    return "\n".join([START, *parts, END])


def update(readme: Path, metrics: Path) -> str:
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{readme}: no results markers ({START} ... {END})")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    return head + render(metrics) + tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readme", type=Path, default=Path("README.md"))
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--check", action="store_true", help="exit 1 if the README's tables differ from metrics/")
    args = ap.parse_args()
    new = update(args.readme, args.metrics)
    if args.check:
        if new != args.readme.read_text():
            print(f"{args.readme} is out of date with {args.metrics}/; run python -m frozenbridge.report", file=sys.stderr)
            sys.exit(1)
        return
    args.readme.write_text(new)


if __name__ == "__main__":
    main()
