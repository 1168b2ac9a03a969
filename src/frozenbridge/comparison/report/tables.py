"""The connector comparison's tables (made by `python -m frozenbridge.comparison`): every design beside the MLP
its view pairs it with (views.mlp_sentence says which), on the same paired replicates, at one of three
views kept apart. The equal-settings view (results/connectors/equal-settings/) trained every design at the MLP's
settings and is kept as its own view; the own-best view (results/connectors/<setting>/) each design at its own best
setting, stage 1 stopped by its rule; the equal-steps view (results/connectors/equal-steps/<setting>/) every design
and its MLP the same stage-1 steps. Each view is read from its own folder alone, so they are never mixed. Captions
are stage 1's runs, the questions caption_qa's; each cell is the median exact match with [lowest–highest] over the replicates and the median
gap (right minus the best control). The step ratio, the design's question step time over the MLP's, comes from
bench/designs-cpu-2core.json, measured in one run. The findings under each view are findings.py's."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.comparison.report.sentences import per_replicate
from frozenbridge.shapes.report.analysis_tables import NUMBER_WORDS

TASKS = (("caption", "caption"), ("count", "caption_qa"), ("binding", "caption_qa"), ("leftmost", "caption_qa"))
TESTS = (("seen", "seen"), ("heldout", "held-out"))
OWN_BEST = "results/connectors"  # where comparison keeps each setting: each design at its own best setting
EQUAL_SETTINGS = f"{OWN_BEST}/equal-settings"  # the first comparison, every design at the MLP's settings, kept apart
EQUAL_STEPS = f"{OWN_BEST}/equal-steps"  # every design and its MLP trained the same stage-1 steps, no early stop
NOT_SETTINGS = ("equal-settings", "equal-steps", "sweep")  # folders under results/connectors/ that hold no setting
VIEWS = {EQUAL_SETTINGS: ("Equal settings", "every design at the MLP's settings"),
         OWN_BEST: ("Own best", "each design at its own best setting"),
         EQUAL_STEPS: ("Equal steps", "every design and the MLP trained the same stage-1 steps")}  # title, what it
# compares; in the pages' order
NAMES = {EQUAL_SETTINGS: "equal-settings", OWN_BEST: "own-best", EQUAL_STEPS: "equal-steps"}  # comparison --view
FOLDERS = {EQUAL_SETTINGS: f"{EQUAL_SETTINGS}/", OWN_BEST: f"{OWN_BEST}/<setting>/",
           EQUAL_STEPS: f"{EQUAL_STEPS}/<setting>/"}  # where a view keeps its settings, as the pages say it


def figure(view: str = EQUAL_SETTINGS) -> str:
    """A view's figure, beside its settings (drawn by tools.report with figure.draw)."""
    return f"{view}/exact_match.png"


def figure_line(view: str = EQUAL_SETTINGS) -> str:
    """The markdown of the view's figure, from docs/."""
    return f"![Exact match per design, task and pair set, {VIEWS[view][0].lower()}](../{figure(view)})"


FIGURE = figure(EQUAL_SETTINGS)


def _cell(per: dict) -> str:
    if not per:
        return "—"
    right = [r["right"] for r in per.values()]
    gap = statistics.median(r["gap"] for r in per.values())
    return f"{statistics.median(right):.4g} [{min(right):.4g}–{max(right):.4g}]; gap {gap:.4g}"


def bench_row(bench: dict | None, setting: str, what: str) -> dict | None:
    """The designs benchmark's row `what` ("question step", "question step FLOPs") of this setting."""
    for row in (bench or {}).get("rows", []):
        if row["measure"].startswith(f"{setting} (") and row["measure"].endswith(f": {what}"):
            return row
    return None


def step_ratio(bench: dict | None, setting: str) -> str | None:
    """This design's question step time over the MLP's, from the designs benchmark ("0.72×": below 1, this design is
    faster), or None where it is not benchmarked. The benchmark's own rows hold the MLP's over the design's; every
    page shows this one direction, through this helper (the results page's tables and the connectors page's
    findings)."""
    row = bench_row(bench, setting, "question step")
    return None if row is None else f"{1 / row['ratio']:.2f}×"


def step_flops(bench: dict | None, setting: str) -> str:
    """One training question step's FLOPs (forward and backward, counted by the benchmark), in GFLOP."""
    row = bench_row(bench, setting, "question step FLOPs")
    return "—" if row is None else f"{row['a_value']:.0f}"


def designs(root: Path, view: str = EQUAL_SETTINGS) -> dict[str, tuple[dict, Path]]:
    """{setting: (its design.json, its metrics/shapes folder)} of one view's folder (a key of VIEWS),
    the MLP's first: its own metrics where the view keeps them (the equal-settings view keeps the default run it was
    paired with, so a later default run does not move it; the own-best view's MLP is a setting trained at its own
    best, so it is there only once run), else, in the equal-settings view, the default run's; the other view's
    folder and the sweep's are never read as settings."""
    kept = root / view
    out = {}
    for folder in sorted(kept.glob("*/"), key=lambda f: (f.name != "mlp", f.name)):
        if folder.name in NOT_SETTINGS:
            continue
        if (facts := read_json_if_present(folder / "design.json")) is not None:
            own = folder / "metrics" / "shapes"
            if folder.name != "mlp" or (own / "replicates.json").is_file():
                out[folder.name] = (facts, own)
            elif view == EQUAL_SETTINGS:  # the views with an MLP of their own have it only once it has run
                out[folder.name] = (facts, root / "metrics" / "shapes")
    return out


def _untimed(facts: dict) -> str:
    """" without replicate 4, restored from DVC's run cache" where a replicate's stages were not run by the sitting
    that kept it (a sitting stopped before keeping them had run them): its minutes would be the restore's."""
    untimed = facts.get("untimed")
    return f" without replicate{'s' * (len(untimed) > 1)} {', '.join(map(str, untimed))}, restored from DVC's " \
        "run cache" if untimed else ""


def _steps(facts: dict, before: str, after: str) -> str:
    """The machine's benchmark step around the design's minutes, "0.99–0.95 s" (before–after) for one replicate,
    "0.92–1.85 s" (lowest–highest) over several, or nothing where it was not measured: machines, and one machine
    over a day, differ in speed."""
    steps = facts.get("benchmark_step_seconds")
    if not steps:
        return ""
    shown = steps if len(steps) <= 2 else (min(steps), max(steps))
    return f"{before}{'–'.join(f'{s:.2f}' for s in shown)} s{after}"


def compared(root: Path, view: str = EQUAL_SETTINGS) -> bool:
    """Whether the view holds a design beside an MLP."""
    return bool(set(designs(root, view)) - {"mlp"})


def view_title(view: str) -> str:
    """The view's heading: "Equal settings: every design at the MLP's settings"."""
    title, what = VIEWS[view]
    return f"{title}: {what}"


def stage1_steps(root: Path, view: str) -> int | None:
    """The stage-1 steps every setting of the view trained, where the view fixes them (its MLP's setting names
    `train.stage1_steps`), else None: read from the kept design.json, never typed."""
    found = designs(root, view)
    setting = (found.get("mlp", ({}, None))[0].get("setting") or {}) if found else {}
    steps = setting.get("train.stage1_steps")
    return int(steps) if steps is not None else None


def what_it_compares(root: Path, view: str) -> str:
    """What the view compares, with the stage-1 steps of the equal-steps view read from its settings."""
    if view == EQUAL_STEPS and (steps := stage1_steps(root, view)) is not None:
        return f"every design and the MLP trained the same {steps:,} stage-1 steps, each at its sweep setting"
    return VIEWS[view][1]


def place(offset: int, where: str) -> str:
    """Where a view shown `offset` places after this one (before, if negative) stands: "the section after this
    one", "two sections before this one"."""
    side = "before" if offset < 0 else "after"
    count = abs(offset)
    return f"the {where} {side} this one" if count == 1 else f"{NUMBER_WORDS[count]} {where}s {side} this one"


def view_sentences(root: Path, view: str, where: str) -> str:
    """What the view is, where it is kept, which other views the page shows (`where`: "table" or "section") or which
    is still to come, and which MLP its designs are paired with (views.mlp_sentence)."""
    from frozenbridge.comparison.report.views import mlp_sentence

    order = list(VIEWS)
    text = f"This is the {NAMES[view]} comparison, {what_it_compares(root, view)}, kept in `{FOLDERS[view]}`."
    shown = [v for v in order if v != view and compared(root, v)]
    if shown:
        spots = [f"the {NAMES[v]} view ({place(order.index(v) - order.index(view), where)})" for v in shown]
        text += f" Beside it, read apart: {' and '.join(spots)}."
    if to_come := [v for v in order if v != view and not compared(root, v) and v != EQUAL_SETTINGS]:
        text += " " + " ".join(f"The {NAMES[v]} comparison, {VIEWS[v][1]}, is to come in `{FOLDERS[v]}`."
                               for v in to_come)
    mlp = mlp_sentence(root, view)
    return f"{text} {mlp}" if mlp else text


def connectors_table(root: Path, view: str = EQUAL_SETTINGS) -> list[str]:
    """The view's table (EQUAL_SETTINGS or OWN_BEST), read from its folder alone; [] before it compares a design."""
    found = designs(root, view)
    if set(found) <= {"mlp"}:
        return []
    bench = read_json_if_present(root / "bench" / "designs-cpu-2core.json")
    head = " | ".join(f"{task} ({'stage 1' if recipe == 'caption' else recipe})" for task, recipe in TASKS)
    out = [f"{view_sentences(root, view, 'table')} Each design went through stage 1 and caption_qa on the same paired "
           "replicates (`python -m frozenbridge.comparison`). Exact match %, median [lowest–highest] over the "
           "replicates, and the median gap:", "",
           f"| design | replicates | trained parameters | image tokens | question step GFLOP | "
           f"question step time, its / the MLP's | minutes (benchmark step) | pairs | {head} |",
           "|---|---:|---:|---:|---:|---:|---:|---|" + "---|" * len(TASKS)]
    for setting, (facts, metrics) in found.items():
        minutes = "—" if facts.get("minutes") is None else f"{facts['minutes']:.0f}{_untimed(facts)}" \
            f"{_steps(facts, ' (', ')')}"
        task, recipe = TASKS[0]
        runs = len(per_replicate(metrics, recipe, TESTS[0][0], task))
        for i, (test, label) in enumerate(TESTS):
            cells = [_cell(per_replicate(metrics, recipe, test, task)) for task, recipe in TASKS]
            lead = (f"{setting} | {runs} | {facts['connector_params']:,} | {facts['image_tokens']} | "
                    f"{step_flops(bench, setting)} | "
                    f"{'1.00×' if setting == 'mlp' else step_ratio(bench, setting) or '—'} | {minutes}") if i == 0 \
                else " | | | | | |"
            out.append(f"| {lead} | {label} | {' | '.join(cells)} |")
    return out + [""]


def partner(found: dict, setting: str) -> str:
    """The MLP a design is paired with: the view's own ("mlp"), or the one the tool trained on the design's own
    machine and precision (its design.json's `paired_with`)."""
    return found[setting][0].get("paired_with") or "mlp"


def paired(found: dict, setting: str, test: str, task: str, recipe: str) -> list[float]:
    """This design's exact match minus its MLP's (partner), replicate by replicate (the replicates both have)."""
    if partner(found, setting) not in found:
        return []
    mine, mlp = (per_replicate(found[name][1], recipe, test, task) for name in (setting, partner(found, setting)))
    return [round(mine[r]["right"] - mlp[r]["right"], 2) for r in sorted(mine, key=int) if r in mlp]


def ahead_behind(found: dict, setting: str) -> tuple[list[str], list[str]]:
    """The cells ("held-out count") where the design is ahead of its MLP in every replicate, and those where it is
    behind in every one, held-out pairs first."""
    ahead, behind = [], []
    for test, label in reversed(TESTS):
        for task, recipe in TASKS:
            if diffs := paired(found, setting, test, task, recipe):
                if min(diffs) > 0:
                    ahead.append(f"{label} {task}")
                elif max(diffs) < 0:
                    behind.append(f"{label} {task}")
    return ahead, behind
