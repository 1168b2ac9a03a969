"""Section 9's claims at the views that know the regime: each design's stage-1 curves (metrics/shapes/stage1.json:
the stop rule's share of training captions exact at each check) beside its MLP's, replicate by replicate, judged by
tools/verdicts/regime.py. `steps` asks which reaches the rule's share in fewer steps; `best` which reaches the
higher share within stage 1's most steps. A design that never reached the share and was still rising when stage 1
ended is "inconclusive: still learning at step N", never "does not hold".

The curves' plan is the stop rule's own (params.yaml's shapes.train.stage1_until: the share, a check every `every`
steps, at most `max_steps`); a curve is flat when its last FLAT_CHECKS checks add less than FLAT_GAIN points."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.comparison.report.tables import EQUAL_SETTINGS, EQUAL_STEPS, designs, partner
from frozenbridge.comparison.sweep.plan import Plan
from frozenbridge.tools.verdicts.regime import best_within_cap, steps_to_threshold
from frozenbridge.tools.verdicts.connector_readers import at_view, run_command
from frozenbridge.tools.verdicts.readers import Sources
from frozenbridge.tools.verdicts.rules import FAILS, HOLDS, OPEN, Cell, Evidence, paired_cell

FLAT_CHECKS, FLAT_GAIN = 4, 2.0  # a stage-1 curve whose last 4 checks add less than 2 points is flat
VIEWS = {"steps": (steps_to_threshold, "fewer stage-1 steps to the stop rule's share of training captions exact"),
         "best": (best_within_cap, "a higher best share of training captions exact within stage 1's most steps")}


@dataclass(frozen=True)
class AtTheView:
    """The rule of a claim judged at one view: the view's own verdict (tools/verdicts/regime.py), whose paired test is
    the project's (`Ahead("first")`) and which says "still learning" where a design had not stopped rising. With
    `expect="second"` the claim is that the MLP is ahead: the view's "holds" fails it, its "does not hold" (the MLP
    ahead) holds it, and "still learning" stays inconclusive."""
    view: str
    expect: str = "first"

    @property
    def text(self) -> str:
        return f"the {self.expect} of the pair ahead by {VIEWS[self.view][1]}, paired by replicate; a design still " \
               "rising when stage 1 ended is inconclusive"

    def cell(self, cell: Cell) -> tuple[str, str]:
        verdict = cell.values[0]
        if self.expect == "first":
            return verdict.verdict, cell.label + ": " + verdict.reason
        turn = {HOLDS: FAILS, FAILS: HOLDS}
        # a "still learning" reason says what the view would decide otherwise: turned too, so it speaks for the claim
        reason = re.sub(f"otherwise ({HOLDS}|{FAILS}):", lambda m: f"otherwise {turn[m.group(1)]}:", verdict.reason)
        return turn.get(verdict.verdict, verdict.verdict), cell.label + ": " + reason


def stage1_plan(root, setting: dict | None = None) -> Plan:
    """The stop rule as a plan: its share, its checks' spacing and its most steps, from params.yaml under the
    setting's own keys (design.json's `setting`: the own-best view lets stage 1 run to the sweep's cap)."""
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    until = dict(((params.get("shapes") or {}).get("train") or {}).get("stage1_until") or {})
    prefix = "train.stage1_until."
    until.update({key[len(prefix):]: value for key, value in (setting or {}).items() if key.startswith(prefix)})
    every, cap = until.get("every", 50), until.get("max_steps", 600)
    return Plan(threshold=100 * until.get("share", 0.6), every=every, cap=cap, checks=FLAT_CHECKS, gain=FLAT_GAIN,
                after=0, rule="fewest_steps_then_best_at_cap", grids=(), source="params.yaml stage1_until")


def curves(metrics) -> list[list] | None:
    """The replicates' stage-1 curves in replicate order, the loss 0 where a check has none."""
    found = read_json_if_present(metrics / "stage1.json")
    if not found:
        return None
    return [[[step, exact, loss or 0.0] for step, exact, loss in found[r]["curve"]] for r in sorted(found, key=int)]


def regime(first: str, view: str, kept: str = EQUAL_SETTINGS) -> Callable[[Sources], Evidence]:
    """`first` against the MLP it is paired with, at `view` ("steps" or "best"), in the comparison's view `kept`
    (comparison.report.tables: EQUAL_SETTINGS, every design at the MLP's settings, or OWN_BEST)."""
    def read(s: Sources) -> Evidence:
        found = designs(s.root, kept)
        other = partner(found, first) if first in found else "mlp"
        lacking = [name for name in (first, other) if name not in found and (name != "mlp" or kept != EQUAL_SETTINGS)]
        if first not in found or lacking:
            return Evidence(missing=run_command(kept, *lacking))
        mine, theirs = (curves(found[name][1]) if name in found else None for name in (first, other))
        if mine is None or theirs is None or not all(mine) or not all(theirs):
            return Evidence(missing=run_command(kept, first) if mine is None else "dvc repro shapes_summarize")
        plan = stage1_plan(s.root, found[first][0].get("setting"))
        n = min(len(mine), len(theirs))
        verdict = VIEWS[view][0](mine[:n], theirs[:n], plan, first)
        shown = re.sub(f"otherwise ({HOLDS}|{FAILS}|{OPEN}): ", "", verdict.reason)  # the verdict column judges
        return Evidence([Cell(f"{first} − {other}", (verdict,))], shown,
                        f"{kept}/{first}/metrics/shapes/stage1.json, the MLP's stage1.json")
    return at_view(read, kept)


def share_at_end(first: str, kept: str = EQUAL_STEPS) -> Callable[[Sources], Evidence]:
    """`first` against its MLP at the end of stage 1, in a view where both trained the same steps (EQUAL_STEPS): the
    share of the stop rule's training captions exact at each replicate's last check, first minus the MLP, paired by
    replicate. At equal steps the own-best view's two regimes (fewer steps to the share, the best share within the
    most steps) become this one reading, taken at the same step for every design."""
    def read(s: Sources) -> Evidence:
        found = designs(s.root, kept)
        other = partner(found, first) if first in found else "mlp"
        lacking = [name for name in (first, other) if name not in found]
        if lacking:
            return Evidence(missing=run_command(kept, *lacking))
        mine, theirs = (read_json_if_present(found[name][1] / "stage1.json") or {} for name in (first, other))
        reps = sorted(set(mine) & set(theirs), key=int)
        ends = {r: (mine[r]["curve"][-1], theirs[r]["curve"][-1]) for r in reps
                if mine[r].get("curve") and theirs[r].get("curve")}
        if not ends:
            return Evidence(missing=run_command(kept, first))
        steps = sorted({p[0] for pair in ends.values() for p in pair})
        at = f"step {steps[0]:,}" if len(steps) == 1 else f"steps {', '.join(f'{x:,}' for x in steps)}"
        diffs = [round(a[1] - b[1], 2) for a, b in ends.values()]
        return Evidence([paired_cell(f"training captions exact at {at}", diffs, 100)],
                        f"{first} − {other}, share of the stop rule's training captions exact at {at}, points per "
                        f"replicate: {', '.join(f'{d:+g}' for d in diffs)}",
                        f"{kept}/{first}/metrics/shapes/stage1.json, the MLP's stage1.json")
    return at_view(read, kept)
