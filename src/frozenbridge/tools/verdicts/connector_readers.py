"""Readers of the connector comparison (made by `python -m frozenbridge.comparison`), at one view: the
equal-settings view (results/connectors/equal-settings/, every design at the MLP's settings) unless told the own-best
one (results/connectors/<setting>/) or the equal-steps one (results/connectors/equal-steps/<setting>/). One design's exact match beside another's, paired by replicate, in points. The
MLP's are those the view keeps (comparison/report/views.py's mlp_sentence says which run they are). Captions
come from stage 1's runs, the questions from caption_qa's."""

from __future__ import annotations

from typing import Callable

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.comparison.report.tables import EQUAL_SETTINGS, EQUAL_STEPS, NAMES, OWN_BEST, designs, partner
from frozenbridge.tools.verdicts.grounds import ground
from frozenbridge.tools.verdicts.readers import Sources
from frozenbridge.tools.verdicts.rules import Cell, Evidence, paired_cell

COMMAND = "python -m frozenbridge.comparison"
RECIPE = {"caption": "caption", "count": "caption_qa", "binding": "caption_qa", "leftmost": "caption_qa"}
LABELS = {EQUAL_SETTINGS: "each design at the MLP's settings (the equal-settings view)",
          OWN_BEST: "each design at its own best setting (the own-best view)",
          EQUAL_STEPS: "every design and the MLP trained the same stage-1 steps (the equal-steps view)"}  # what the
# evidence compares


def run_command(view: str, *only: str) -> str:
    """The command that fills the view (the tool's default, own-best, needs no --view); `only`: the settings it lacks
    (the equal-settings view's MLP is the default run's, the other views' a setting to run)."""
    results = [] if view == OWN_BEST else ["--view", NAMES[view]]
    return " ".join([COMMAND, *(["--only", *only] if only else []), *results])


def at_view(read: Callable[[Sources], Evidence], view: str) -> Callable[[Sources], Evidence]:
    """`read`, marked with the view it reads (`read.view`): the connectors page says which views the verdicts read
    from these marks (claims.views_judged)."""
    read.view = view
    return read


def versus(first: str, second: str, cells: tuple[tuple[str, str], ...],
           view: str = EQUAL_SETTINGS) -> Callable[[Sources], Evidence]:
    """Paired cells, one per (test, task): first − second per replicate, exact-match points, at the view."""
    def read(s: Sources) -> Evidence:
        found = designs(s.root, view)
        other = partner(found, first) if second == "mlp" and first in found else second  # its own machine's MLP
        missing = [name for name in (first, other) if name not in found]
        if missing:
            return Evidence(missing=run_command(view, *(name for name in missing
                                                        if name != "mlp" or view != EQUAL_SETTINGS)))
        a, b = (read_json_if_present(found[name][1] / "replicates.json") for name in (first, other))
        if a is None or b is None:
            return Evidence(missing="dvc repro shapes_summarize")
        out, parts, grounds = [], [], []
        for test, task in cells:
            ra, rb = a[RECIPE[task]][test][task], b[RECIPE[task]][test][task]
            reps = sorted(set(ra) & set(rb), key=int)
            diffs = [round(ra[k]["right"] - rb[k]["right"], 2) for k in reps]
            out.append(paired_cell(f"{test} {task}", diffs, 100))
            parts.append(f"{test} {task} {', '.join(f'{d:+g}' for d in diffs)}")
            grounds += [ground(side, name, found[name][1], RECIPE[task], test, task)
                        for side, name in (("first", first), ("second", other))]
        return Evidence(out, f"{first} − {other}, {LABELS[view]}, exact-match points per replicate: "
                        + "; ".join(parts), f"{view}/{first}, {other}", grounds=tuple(g for g in grounds if g))
    return at_view(read, view)


def zero_gate_starts_as_text_model(s: Sources, view: str = EQUAL_SETTINGS) -> Evidence:
    """Every cross-attention setting's text stage (of the view): the largest logit difference from the text model
    with the gates at 0, on its first test pictures."""
    found = {name: f for name, f in designs(s.root, view).items() if name.startswith("cross_attention")}
    gaps = {name: (read_json_if_present(metrics / "text.json") or {}).get("zero_gate") for name, (_, metrics)
            in found.items()}
    gaps = {name: g for name, g in gaps.items() if g}
    if not gaps:
        return Evidence(missing=run_command(view, "cross_attention-4"))
    cells = [Cell(name, (g["max_abs_logit_difference"],)) for name, g in gaps.items()]
    return Evidence(cells, "largest |logit| difference from the text model with every gate at 0: " + ", ".join(
        f"{name} {g['max_abs_logit_difference']:g} on {g['pictures']} pictures" for name, g in gaps.items()),
        ", ".join(f"{view}/{name}/metrics/shapes/text.json" for name in gaps))


def zero_gate(view: str = EQUAL_SETTINGS) -> Callable[[Sources], Evidence]:
    """zero_gate_starts_as_text_model at one view, marked with it (at_view)."""
    return at_view(lambda s: zero_gate_starts_as_text_model(s, view), view)
