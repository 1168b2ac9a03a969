"""The generated pages: docs/results.md (every study's tables, readings, timings and benchmarks, from metrics/,
results/ and bench/) and the README's headline table (a few numbers per study beside the reference's), so every
number a reader sees is computed.

    python -m frozenbridge.tools.report           # rewrite docs/results.md, docs/audit.md and the README's headline
    python -m frozenbridge.tools.report --check   # exit 1 when either is out of date with metrics/ (the tests do)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from frozenbridge.bench.rows import side
from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.digits.report import tables as digits
from frozenbridge.onetoken.report import tables as onetoken
from frozenbridge.retrieval.report import tables as retrieval
from frozenbridge.shapes.report import tables as shapes
from frozenbridge.shapes.report import connectors_figure
from frozenbridge.shapes.report import learning_curves
from frozenbridge.shapes.report.connectors import (EQUAL_SETTINGS, EQUAL_STEPS, OWN_BEST, VIEWS, compared,
                                                  connectors_findings, connectors_table, figure, figure_line,
                                                  view_title)
from frozenbridge.tools.headline_tables import backbone_table, headline_table
from frozenbridge.tools.machines import machines_lines, metrics_machine_sentence
from frozenbridge.tools.repro_report import command_one_time, cpu_label, repro_time
from frozenbridge.tools.rerun_report import rerun_section
from frozenbridge.tools.verdicts.claims import verdict_counts, verdict_rows, verdict_table
from frozenbridge.tools.where_it_runs import FILES as WHERE_FILES
from frozenbridge.tools.where_it_runs import where_it_runs

START, END = "<!-- headline:start (python -m frozenbridge.tools.report) -->", "<!-- headline:end -->"
FINDINGS_START = "<!-- findings:start (python -m frozenbridge.tools.report) -->"
FINDINGS_END = "<!-- findings:end -->"
RESULTS, CONNECTORS = Path("docs/results.md"), Path("docs/connectors.md")
AUDIT, AUDIT_NUMBERS, AUDIT_FIGURE = Path("docs/audit.md"), Path("metrics/audit/audit.json"), "../plots/audit/audit.png"


def command(m: dict, name: str) -> str:
    """The command that remakes a saved benchmark: its machine record's tool, else `python -m frozenbridge.bench
    <name>` (the steps benchmark's record names none)."""
    return m.get("tool", f"python -m frozenbridge.bench {name}")


def bench_table(saved: dict, only: list[dict] | None = None) -> list[str]:
    """A benchmark's rows (bench/rows.py's one format) under the command and machine that made them."""
    m = saved["machine"]
    detail = m["mode"] if "tool" in m else f"{m['mode']} mode"  # a record without a tool: the steps benchmark
    rows = [f"Benchmark (`{command(m, 'steps')}`, {detail}, {m['device']}{cpu_label(m)}, torch {m['torch']}, "
            f"{m['date']}):", "",
            "| measure | a | b | b / a |", "|---|---:|---:|---:|"]
    for r in saved["rows"] if only is None else only:
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.0%}" if r.get("fraction") else f"{r['ratio']:.2f}×"
        rows.append(f"| {r['measure']} | {side(r['a'], r['a_value'])} | {side(r['b'], r['b_value'])} | {ratio} |")
    return rows


def gpu_table(saved: dict) -> list[str]:
    """The rows of `python -m frozenbridge.bench gpu`: lone values (bench/rows.py's value_row, `a` its unit)."""
    m = saved["machine"]
    rows = [f"GPU figures (`{command(m, 'gpu')}`, {m['device']}, {m['models']}, torch {m['torch']}, {m['date']}):",
            "", "| measure | value |", "|---|---:|"]
    rows += [f"| {r['measure']} | {r['a_value']:.4g} {r['a']} |" for r in saved["rows"]]
    return rows


SPEED_BENCH = "cpu-2core.json"  # the committed benchmark whose step rows the README quotes
SPEED_ROWS = ("question step", "train step, batch 16, 49 image tokens: matmul", "train step, batch 16: torch.compile",
              "train step, batch 16, compiled layers: matmul")


FLOOR_BENCHES = "floor-*.json"  # each step against its matrix products alone, a file a machine (bench floor --out)


def readme_benches(root: Path) -> list[str]:
    """The bench/ files the README's tables are made from: the step levers, each machine's floor, where it runs."""
    bench = root / "bench"
    names = [SPEED_BENCH, *(p.name for p in sorted(bench.glob(FLOOR_BENCHES))), *WHERE_FILES]
    return [name for name in names if (bench / name).is_file()]


def speed_table(root: Path) -> list[str]:
    """The README's speed rows: the training step's levers from bench/cpu-2core.json, each a ratio measured in one
    run, and the MLP's steps against their floor from each machine's bench/floor-*.json (the operator breakdown and
    the rest stay in the results page)."""
    lines = []
    saved = read_json_if_present(root / "bench" / SPEED_BENCH)
    if saved is not None:
        rows = [r for r in saved["rows"] if r["measure"].startswith(SPEED_ROWS)]
        m = saved["machine"]
        lines += ["", f"Where a training step's time goes (`{command(m, 'steps')}`, {m['device']}, "
                  f"{m['date']}; every row of it in [docs/results.md](docs/results.md#benchmarks)):", "",
                  "| measure | a | b | b / a |", "|---|---:|---:|---:|", *bench_table(saved, rows)[4:]]
    for path in sorted((root / "bench").glob(FLOOR_BENCHES)):
        floor = json.loads(path.read_text())
        rows = [r for r in floor["rows"] if r["measure"].endswith("step / floor") and ", MLP," in r["measure"]]
        m = floor["machine"]
        lines += ["", f"Each step against its floor, the same step's matrix products alone (`{command(m, 'floor')}`, "
                  f"{m['device']}{cpu_label(m)}, {m['date']}; every step and its operators in "
                  "[docs/results.md](docs/results.md#benchmarks)):", "",
                  "| measure | a | b | b / a |", "|---|---:|---:|---:|", *bench_table(floor, rows)[4:]]
    return lines


def render_results(root: Path) -> str:
    """docs/results.md, whole: each study's tables, on-demand experiments, timing, the sweep and benchmarks."""
    metrics, bench = root / "metrics", root / "bench"
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else None
    results, sweep = shapes.shapes_results(metrics, bench, params)
    parts = ["# Results", "",
             "Generated by `python -m frozenbridge.tools.report` from `metrics/`, `results/` and `bench/`; a test "
             "fails when this page and the metrics disagree. Each study's page says how its numbers are made.", "",
             "## The references' claims, judged", "", *verdict_table(root), "",
             "## The shapes study", "", *results]
    for folder in sorted((root / "results").glob("*/")):
        parts += digits.limits_results(folder) if (folder / "limits.json").is_file() else \
            [*shapes.experiment_results(folder), *backbone_table(folder, root)]
    views = [(view, table) for view in VIEWS if (table := connectors_table(root, view))]
    if views:  # each view's own table once it compares a design, in VIEWS' order; never one table of two views
        parts += ["## Connector designs", ""]
        for view, table in views:
            curves = [learning_curves.figure_line(view), ""] if (root / learning_curves.figure(view)).is_file() and \
                view == EQUAL_STEPS else []
            parts += [f"### {view_title(view)}", "", *table, figure_line(view), "", *curves]
        parts += ["What it found, design by design: [connectors](connectors.md#what-the-comparison-found).", ""]
    if (repro := read_json_if_present(bench / "repro.json")) is not None:
        parts += ["## Time", "", *repro_time(repro, root)]
    if reruns := rerun_section(bench):
        parts += ["## Reruns", "", "The same params on the same machine should give the same bytes "
                  "(`python -m frozenbridge.tools.rerun_check`, in [scaling](scaling.md#a-rerun-that-gives-other-bits)).",
                  "", *reruns]
    if sweep:
        parts += ["## Stage-1 convergence", "", *sweep]
    for title, study in (("The digits study", digits.digits_results(metrics)),
                         ("The retrieval study", retrieval.retrieval_results(metrics)),
                         ("The one-token study", onetoken.onetoken_results(metrics))):
        if study:
            parts += [f"## {title}", "", *study]
    benches = [p for p in sorted(bench.glob("*.json")) if p.name != "repro.json"
               and p.name not in shapes.BENCH_FILES and p.name not in WHERE_FILES]
    where = where_it_runs(bench)
    if benches or where:
        shown = [p.name for p in benches] + [name for name in WHERE_FILES if (bench / name).is_file()]
        parts += ["## Benchmarks", "", *machines_lines(bench, shown, "The benchmarks below come from these machines, "
                                                       "as their records name them:"), ""]
    if where:
        parts += [*where, ""]
    for path in benches:
        saved = json.loads(path.read_text())
        parts += [*(gpu_table(saved) if "models" in saved["machine"] else bench_table(saved)), ""]
    text = "\n".join(parts).rstrip() + "\n"
    return text.replace("](plots/", "](../plots/")  # the page lives in docs/; the figures at the root's plots/


def replace_block(page: Path, start: str, end: str, lines: list[str]) -> str:
    """`page`'s text with the lines between its `start` and `end` markers replaced."""
    text = page.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{page}: no generated-block markers ({start} ... {end})")
    head, rest = text.split(start, 1)
    return head + "\n".join([start, *lines, end]) + rest.split(end, 1)[1]


def update_connectors_page(page: Path, root: Path) -> str:
    """docs/connectors.md with its findings (shapes.report.connectors): first which views the results hold and their
    settings (shapes.report.connector_views) and which the verdicts read (tools.verdicts.claims), then the
    equal-settings view's findings from results/connectors/equal-settings/, the own-best view's from
    results/connectors/<setting>/ and the equal-steps view's from results/connectors/equal-steps/ once each compares
    a design, which own-best findings survive equal steps (shapes.report.equal_training), and the sweep's table
    (tools.design_sweep.report) from results/connectors/sweep/."""
    from frozenbridge.shapes.report.connector_views import held_lines
    from frozenbridge.tools.design_sweep.report import sweep_findings
    from frozenbridge.tools.verdicts.claims import views_judged_sentence

    from frozenbridge.shapes.report.equal_training import survival_lines

    judged = [views_judged_sentence(), ""] if held_lines(root) and views_judged_sentence() else []
    own_best = [*connectors_findings(root, OWN_BEST), ""] if compared(root, OWN_BEST) else []
    steps = [*connectors_findings(root, EQUAL_STEPS), ""] if compared(root, EQUAL_STEPS) else []
    if steps and (root / learning_curves.figure()).is_file():
        steps += [learning_curves.figure_line(), ""]
    survived = [*lines, ""] if (lines := survival_lines(root)) else []
    return replace_block(page, FINDINGS_START, FINDINGS_END, [*held_lines(root), *judged,
                                                              *connectors_findings(root, EQUAL_SETTINGS), "",
                                                              *own_best, *steps, *survived, *sweep_findings(root)])


def update_readme(readme: Path, root: Path) -> str:
    claims = ["", f"The references' claims, judged one by one on these numbers ({verdict_counts(verdict_rows(root))}): "
              "[the verdict table](docs/results.md#the-references-claims-judged)."]
    where = where_it_runs(root / "bench")
    where = [""] + where if where else []
    repro = read_json_if_present(root / "bench" / "repro.json")
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    timed = command_one_time(repro, len(params.get("replicates", []))) if repro else []
    drawn = metrics_machine_sentence(repro)
    machines = [*([""] + [drawn] if drawn else []), *([""] + made if (made := machines_lines(
        root / "bench", readme_benches(root), "The benchmark tables above come from these machines, as their "
        "records name them:")) else [])]
    return replace_block(readme, START, END, [*headline_table(root), *claims, *timed, *speed_table(root), *where,
                                              *machines])


AUDIT_BENCH = "audit-cpu-2core.json"  # python -m frozenbridge.bench audit: a 1,000-picture folder, timed
PART = "audit part: "  # how that bench names the rows of the chain's parts


def audit_timing(root: Path) -> list[str]:
    """docs/audit.md's last section: how long the audit of a 1,000-picture folder took, from the saved bench
    (bench/audit-cpu-2core.json), its parts and the goal row; nothing where the bench has not been saved."""
    saved = read_json_if_present(root / "bench" / AUDIT_BENCH)
    if saved is None:
        return []
    m = saved["machine"]
    goal = next(r for r in saved["rows"] if r["a"].startswith("goal"))
    verdict = "within" if goal["ratio"] <= 1 else "over"
    parts = {r["measure"].removeprefix(PART).split(":")[0]: r["a_value"] for r in saved["rows"]
             if r["measure"].startswith(PART)}
    top = max(parts, key=parts.get)
    return ["## How long it takes", "",
            f"A folder of {m['train_pictures']:,} training pictures with {m['questions_per_picture']} questions each "
            f"and {m['test_pictures']} test pictures took {goal['b_value'] / 60:.1f} minutes to audit on the machine "
            f"below. That is {verdict} the {goal['a_value'] / 60:g} minutes the project allows it on a 2-core CPU "
            f"with bf16 ({goal['ratio']:.2f} of it). The pictures are the shapes study's, {m['heldout_pictures']} of "
            f"the test pictures held out, and the steps are the defaults ({m['stage1_steps']} caption and "
            f"{m['stage2_steps']} question steps). The largest part, {top}, took "
            f"{parts[top] / sum(parts.values()):.0%} of the chain.", "", *bench_table(saved)]


def audit_page(root: Path) -> str:
    """docs/audit.md: the audit's page from its numbers (metrics/audit/audit.json, the audit_check stage) and its
    timing (audit_timing), or, where the stage has not run, what makes it."""
    from frozenbridge.audit.report.page import older_page, page_text, written_by_this_audit

    from frozenbridge.tools.audit_ladder import MEASURED, ladder_section

    numbers = read_json_if_present(root / AUDIT_NUMBERS)
    if numbers is not None and not written_by_this_audit(numbers):
        return older_page(str(AUDIT_NUMBERS))
    if numbers is not None:
        timing = audit_timing(root)
        measured = read_json_if_present(root / MEASURED)
        beside = ladder_section(measured, str(MEASURED)) if measured is not None else None
        return (page_text(numbers, AUDIT_FIGURE, beside_study=beside) + "".join(f"\n{line}" for line in timing)
                + ("\n" if timing else ""))
    return ("# The audit\n\nThis page is written from `metrics/audit/audit.json`, which the `audit_check` stage writes "
            "(`dvc repro audit_check`, then `python -m frozenbridge.tools.report`). The committed results do not "
            "hold it yet. To audit a folder of your own now: `frozenbridge audit FOLDER` (README: Your own pictures "
            "and questions).\n")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path("."), help="the project root (metrics/, bench/, README.md)")
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/results.md or the README's headline differ")
    args = ap.parse_args()
    readme, results, connectors = args.root / "README.md", args.root / RESULTS, args.root / CONNECTORS
    pages = {readme: update_readme(readme, args.root), results: render_results(args.root)}
    if connectors.is_file():
        pages[connectors] = update_connectors_page(connectors, args.root)
    pages[args.root / AUDIT] = audit_page(args.root)
    if args.check:
        stale = [str(p) for p, text in pages.items() if not p.is_file() or p.read_text() != text]
        if stale:
            print(f"{', '.join(stale)} out of date with metrics/; run python -m frozenbridge.tools.report",
                  file=sys.stderr)
            sys.exit(1)
        return
    results.parent.mkdir(parents=True, exist_ok=True)
    for path, text in pages.items():
        path.write_text(text)
    for view in VIEWS:  # each view's figure beside its settings; none before it compares one
        connectors_figure.draw(args.root, args.root / figure(view), view)
    learning_curves.draw(args.root, args.root / learning_curves.figure())


if __name__ == "__main__":
    main()
