"""Markdown tables from metrics/, written into README.md between marker comments, so its numbers stay computed.

`python -m frozenbridge.report` rewrites the block; `--check` exits 1 when the README is out of date.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .params import read_yaml
from .reading import reading

START, END = "<!-- results:start (python -m frozenbridge.report) -->", "<!-- results:end -->"


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def data_table(data: dict) -> list[str]:
    rows = ["| split | pictures | count questions | binding questions | leftmost questions |", "|---|---:|---:|---:|---:|"]
    for split in ("train", "test_seen", "test_heldout"):
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
    return ["| encoder | output shape | stored as | pictures | feature files | per picture |", "|---|---|---|---:|---:|---:|",
            f"| {enc['encoder']} | {' x '.join(map(str, enc['output_shape']))} | {enc['dtype']} | {enc['pictures']} "
            f"| {size / 1e6:.1f} MB | {enc['bytes_per_picture'] / 1e3:.1f} kB |"]


def _range(s: dict) -> str:
    return f"{s['median']:g} [{s['min']:g}–{s['max']:g}]"


def stage1_table(main: dict, controls: dict) -> list[str]:
    rows = ["| caption recipe (stage 1), captions | right | blank | wrong | none | gap | distinct captions |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for test in ("seen", "heldout"):
        m, c = main["caption"][test], controls["caption"][test]["caption"]
        rows.append(f"| {test} pairs | {_range(m['caption']['right'])} | {c['blank']['median']:g} | "
                    f"{c['wrong']['median']:g} | {c['none']['median']:g} | {_range(m['caption']['gap'])} | "
                    f"{_range(m['distinct_captions'])} |")
    return rows


def recipe_table(main: dict) -> list[str]:
    rows = ["| recipe | task | seen: right | seen: gap | held-out: right | held-out: gap |", "|---|---|---:|---:|---:|---:|"]
    for recipe, tests in main.items():
        for task in ("caption", "count", "binding", "leftmost"):
            if task in tests["seen"]:
                rows.append(f"| {recipe} | {task} | {_range(tests['seen'][task]['right'])} | "
                            f"{_range(tests['seen'][task]['gap'])} | {_range(tests['heldout'][task]['right'])} | "
                            f"{_range(tests['heldout'][task]['gap'])} |")
    return rows


def paired_table(reps: dict, a: str = "qa", b: str = "caption_qa") -> list[str]:
    """Two recipes replicate by replicate (paired: same initial connector, same questions), every task and test."""
    if a not in reps or b not in reps:
        return []
    rows = [f"{a} vs {b}, replicate by replicate (right-picture exact match, %, from `metrics/replicates.json`):", "",
            f"| test pairs | task | replicate | {a} | {b} | {b} − {a} |", "|---|---|---:|---:|---:|---:|"]
    for test in ("heldout", "seen"):
        for task in ("binding", "leftmost", "count"):
            ra, rb = reps[a].get(test, {}).get(task, {}), reps[b].get(test, {}).get(task, {})
            for r in sorted(set(ra) & set(rb), key=int):
                rows.append(f"| {test} | {task} | {r} | {ra[r]['right']:g} | {rb[r]['right']:g} | "
                            f"{rb[r]['right'] - ra[r]['right']:+.4g} |")
    return rows + [""]


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def _step_times(saved: dict) -> str:
    before, after = saved["benchmark_step_seconds"], saved.get("benchmark_step_after_seconds")
    if after is None:
        return f"{before:.2f} s"
    return f"{before:.2f} s before the run and {after:.2f} s after it"


def repro_time(saved: dict) -> list[str]:
    """`python -m frozenbridge.repro_timing`: the default run's wall time, by kind of stage, and its machine."""
    m, c, total = saved["machine"], saved["categories"], saved["total_seconds"]
    steps = saved["training_steps_seconds"]
    rest = total - steps - c.get("data", 0.0)
    return [f"**Time** (`python -m frozenbridge.repro_timing`, {m['date']}): `dvc repro` of every stage took "
            f"**{_minutes(total)}** on a {m['cpu']} {m['device'].upper()} machine (torch {m['torch']}) whose benchmark "
            f"step (batch 16 captions, 49 image tokens) took {_step_times(saved)}. Data "
            f"(generate, encode) {_minutes(c.get('data', 0.0))}; training stages {_minutes(c.get('training', 0.0))}, "
            f"of which {_minutes(steps)} inside training steps; evaluation {_minutes(c.get('evaluation', 0.0))}; "
            f"summaries and figures {_minutes(c.get('summaries and figures', 0.0))}. Evaluation and the "
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


def _steps(v) -> str:
    return "never" if v is None else f"{v:g}"


def converge_table(saved: dict, params: dict | None) -> list[str]:
    """`python -m frozenbridge.converge`: steps (and seconds) to 50% and 70% exact captions, median and worst seed."""
    rows = [f"Stage-1 convergence (`python -m frozenbridge.converge`): exact captions of {saved['items']} seen-pair "
            f"test pictures every {saved['every']} steps; median and worst over the seeds (a seed is a replicate's "
            "initial connector and caption order); \"never\" = not within the steps given. The setting "
            "params.yaml holds is marked ◀.", "",
            "| setting | seeds | s a step | to 50%: median / worst, steps (s) | to 70%: median / worst, steps (s) | "
            "best exact per seed, % |", "|---|---:|---:|---:|---:|---:|"]
    for name, entry in saved["results"].items():
        s = entry["summary"]
        if "step_seconds" not in entry:
            continue  # not timed alone yet (python -m frozenbridge.converge --time-steps N)
        sec = lambda v: "—" if v is None else f"{v * entry['step_seconds']:.0f}"  # noqa: E731
        cells = [f"{_steps(s[f'median_{t}'])} / {_steps(s[f'worst_{t}'])} ({sec(s[f'median_{t}'])} / "
                 f"{sec(s[f'worst_{t}'])})" for t in (50, 70)]
        mark = " ◀" if params is not None and _matches(entry["overrides"], params) else ""
        rows.append(f"| {name}{mark} | {s['seeds']} | {entry['step_seconds']:.2f} | {cells[0]} | {cells[1]} | "
                    f"{', '.join(f'{e:g}' for e in s['best_exact'])} (of {entry['steps']} steps) |")
    return rows + ([] if params is None else _against_default(saved["results"], params))


def _worst_seconds(entry: dict) -> float:
    worst = entry["summary"]["worst_70"]
    return float("inf") if worst is None else worst * entry["step_seconds"]


NOISE = 0.05  # step times measured a few minutes apart differ by about this much on a shared machine


def _against_default(results: dict, params: dict) -> list[str]:
    """One generated line: which settings beat the marked one on the worst seed's seconds to 70% by more than the
    timing noise, which were level with it, and which were slower."""
    timed = {k: e for k, e in results.items() if "step_seconds" in e}
    default = next((k for k, e in timed.items() if _matches(e["overrides"], params)), None)
    if default is None:
        return []
    mine = _worst_seconds(timed[default])
    others = {k: _worst_seconds(e) for k, e in timed.items() if k != default}
    faster = [f"{k} ({s:.0f} s)" for k, s in others.items() if s < mine * (1 - NOISE)]
    level = [f"{k} ({s:.0f} s)" for k, s in others.items() if mine * (1 - NOISE) <= s <= mine * (1 + NOISE)]
    slower = [k for k, s in others.items() if s > mine * (1 + NOISE)]
    return ["", f"On the worst seed's seconds to 70%, against the marked setting ({mine:.0f} s): faster by more "
            f"than {NOISE:.0%}: {', '.join(faster) or 'none'}; within {NOISE:.0%}: {', '.join(level) or 'none'}; "
            f"slower or never there: {', '.join(slower) or 'none'}."]


def heldout_curve_table(saved: dict) -> list[str]:
    """`converge --heldout --no-stop`: seen- and held-out-pair exact captions against stage-1 steps, per seed."""
    rows: list[str] = []
    for name, entry in saved["results"].items():
        runs = [r for r in entry["runs"] if "heldout_curve" in r]
        if not runs:
            continue
        seeds = ", ".join(str(r["seed"]) for r in runs)
        rows += [f"Exact captions against stage-1 steps, setting \"{name}\", seeds {seeds} "
                 f"(`python -m frozenbridge.converge --heldout --no-stop`; {saved['items']} pictures of each test set):",
                 "", "| stage-1 steps | seen pairs, % (per seed) | held-out pairs, % (per seed) |", "|---:|---:|---:|"]
        steps = sorted({s for r in runs for s, _ in r["curve"]})
        for step in steps:
            seen = [dict(r["curve"]).get(step) for r in runs]
            held = [dict(r["heldout_curve"]).get(step) for r in runs]
            fmt = lambda vals: ", ".join("—" if v is None else f"{v:g}" for v in vals)  # noqa: E731
            rows.append(f"| {step} | {fmt(seen)} | {fmt(held)} |")
        rows.append("")
    return rows


def _matches(overrides: dict, params: dict) -> bool:
    def get(key: str):
        node = params
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return all(get(k) == v for k, v in overrides.items())


def render(metrics: Path) -> str:
    parts: list[str] = []
    data, enc = _load(metrics / "data.json"), _load(metrics / "encode.json")
    if data:
        parts += ["Generated data (`metrics/data.json`):", "", *data_table(data), "", *color_kind_table(data["train_color_kind"]), ""]
    if enc:
        parts += ["Cached features (`metrics/encode.json`):", "", *encode_table(enc), ""]
    scores, controls = _load(metrics / "scores.json"), _load(metrics / "controls.json")
    if scores and controls:
        parts += ["Exact match, % (median [min–max] over replicates; gap = right − max(blank, wrong, none)) from "
                  "`metrics/scores.json` and `metrics/controls.json`:", "",
                  *(stage1_table(scores, controls) if "caption" in scores else []), "", *recipe_table(scores), ""]
        reps = _load(metrics / "replicates.json")
        parts += [*paired_table(reps or {}), *reading(scores, controls, reps)]
    bench = metrics.parent / "bench"
    if (repro := _load(bench / "repro.json")) is not None:
        parts += repro_time(repro)
    params_path = metrics.parent / "params.yaml"
    params = read_yaml(params_path.read_text()) if params_path.is_file() else None
    if (converge := _load(bench / "converge.json")) is not None:
        parts += [*converge_table(converge, params), ""]
    if (frontier := _load(bench / "converge-heldout.json")) is not None:
        parts += heldout_curve_table(frontier)
    for path in sorted(bench.glob("*.json")):
        if path.name not in ("repro.json", "converge.json", "converge-heldout.json"):
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
