"""docs/connectors.md's generated findings of one view of the connector comparison: a paragraph per design (what it
costs beside its MLP, how stage 1 ended, what it did inside, where it is ahead or behind in every replicate), the
best per task, the papers' claims beside the own-best view, and the view's figure. The tables and the views' folders
are tables.py's."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.comparison.report.sentences import inside_sentence, per_replicate, stage1_sentence
from frozenbridge.comparison.report.tables import (EQUAL_SETTINGS, NAMES, OWN_BEST, TASKS, TESTS, VIEWS, _steps,
                                                   _untimed, ahead_behind, designs, figure_line, paired, partner,
                                                   step_flops, step_ratio, view_sentences)
from frozenbridge.comparison.report.literature import literature_lines


def machines(facts: dict) -> list[str]:
    """The CPUs a setting's replicates were made on, "model (bf16 path)" each: its merged design.json's list, or its
    one machine record (the default run's MLP, timed by tools.repro_timing). Empty where a record does not name its
    CPU (runs made before records did): unknown, never a different machine."""
    m = facts.get("machine") or {}
    found = list(facts.get("machines") or ([f"{m['cpu_model']} ({m.get('bf16_path', 'bf16 ?')})"]
                                           if m.get("cpu_model") else []))
    return [] if any(name.startswith("CPU, ") or "bf16 ?" in name for name in found) else found


def machines_note(found: dict, setting: str) -> str:
    """A sentence where a design and its MLP were not all made on one machine: their pairs then differ by each
    machine's bf16 rounding as well as by design."""
    mine, theirs = machines(found[setting][0]), machines(found.get(partner(found, setting), ({}, None))[0])
    if not mine or not theirs or (len(set(mine) | set(theirs)) == 1):
        return ""
    return (f" Its replicates were made on {', '.join(mine)}; its MLP's on {', '.join(theirs)}: the pairs cross "
            "machines, so they differ by each machine's bf16 rounding as well as by design.")


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):+.4g} [{min(values):+.4g}, {max(values):+.4g}]"


def _listed(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


def setting_findings(found: dict, setting: str, bench: dict | None) -> str:
    """One paragraph: what the design costs beside the MLP, and where it is ahead or behind in every replicate."""
    facts, mlp = found[setting][0], found["mlp"][0]
    ratio = step_ratio(bench, setting)
    step = (f"a training question step is {step_flops(bench, setting)} GFLOP (the MLP's {step_flops(bench, 'mlp')}) "
            f"and took {ratio} the MLP's time (the designs benchmark)") if ratio else "its step is not benchmarked yet"
    minutes = "" if facts.get("minutes") is None else \
        f", and its comparison took {facts['minutes']:.0f} minutes{_untimed(facts)}" \
        f"{_steps(facts, ' (the benchmark step ', ')')}"
    pair = partner(found, setting)
    paired_note = "" if pair == "mlp" else \
        f" It is paired with {pair}, an MLP trained on its own machine and precision, not the view's `mlp/`."
    text = (f"**{setting}** trains {facts['connector_params']:,} parameters "
            f"({facts['connector_params'] / mlp['connector_params']:.2f}× the MLP's) and gives the language model "
            f"{facts['image_tokens']} image tokens (the MLP {mlp['image_tokens']}). {step[0].upper()}{step[1:]}"
            f"{minutes}.{paired_note}{machines_note(found, setting)}{stage1_sentence(found[setting][1])}"
            f"{inside_sentence(facts)}")
    cells = []
    for test, label in reversed(TESTS):
        parts = [f"{task} {_spread(diffs)}" for task, recipe in TASKS
                 if (diffs := paired(found, setting, test, task, recipe))]
        if parts:
            cells.append(f"{label[0].upper()}{label[1:]} pairs: {', '.join(parts)}.")
    ahead, behind = ahead_behind(found, setting)
    if not cells:
        return text + " No replicate pairs with the MLP's yet."
    return (f"{text} Against the MLP, replicate by replicate, in exact-match points (this design minus the MLP, "
            f"median [lowest, highest]): {' '.join(cells)} Ahead in every replicate: {_listed(ahead)}. Behind in every "
            f"replicate: {_listed(behind)}.")


def best_per_task(found: dict) -> str:
    """The design(s) with the highest median exact match per task on held-out pairs."""
    parts = []
    for task, recipe in TASKS:
        medians = {}
        for setting, (_, metrics) in found.items():
            if per := per_replicate(metrics, recipe, "heldout", task):
                medians[setting] = statistics.median(r["right"] for r in per.values())
        if medians:
            top = max(medians.values())
            parts.append(f"{task}: {' and '.join(s for s, m in medians.items() if m == top)} ({top:.4g}%)")
    return f"Highest median exact match on held-out pairs, per task: {'; '.join(parts)}." if parts else ""


def connectors_findings(root: Path, view: str = EQUAL_SETTINGS) -> list[str]:
    """docs/connectors.md's generated block for one view: what the view is, a paragraph per design and the best per
    task, or what to run."""
    found = designs(root, view)
    if set(found) <= {"mlp"} or "mlp" not in found:
        where = "" if view == OWN_BEST else f" --view {NAMES[view]}"
        return [f"No design has been compared yet: `python -m frozenbridge.comparison{where}` runs the "
                "comparison, then `python -m frozenbridge.tools.report` writes its findings here."]
    bench = read_json_if_present(root / "bench" / "designs-cpu-2core.json")
    out = [f"**{VIEWS[view][0]}.** {view_sentences(root, view, 'section')}", "",
           f"Settings compared so far: {', '.join(s for s in found if not s.startswith('mlp'))}. Each is paired with "
           "the view's MLP replicate by replicate, at the same precision and on the same kind of machine, unless its "
           "paragraph names another MLP or says the pairs cross machines.", ""]
    if view != EQUAL_SETTINGS and (mlp := stage1_sentence(found["mlp"][1])):
        out += [f"**mlp**, {'at its own best' if view == OWN_BEST else 'at its sweep setting'}:{mlp}", ""]
    for setting in found:
        if not setting.startswith("mlp"):
            out += [setting_findings(found, setting, bench), ""]
    papers = literature_lines(root, found, partner) if view == OWN_BEST else []
    return out + [best_per_task(found), "", *papers, *([""] if papers else []), figure_line(view)]
