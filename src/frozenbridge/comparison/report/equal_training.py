"""Which findings of the own-best view survive when every design trains the same stage-1 steps.

A finding is a cell where a design is ahead of its MLP in every replicate, or behind it in every one
(connectors.ahead_behind), in the own-best view (results/connectors/<setting>/: stage 1 stopped by its rule, so each
design and its MLP trained their own number of steps) and in the equal-steps view
(results/connectors/equal-steps/<setting>/: every one trained the same steps). A finding in both views survived; one
in the own-best view only is lost once the training length is the same (where the two views' settings differ in more
than their steps, the paragraph says so: then the setting moved too); one at equal steps only appears there.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.comparison.report.tables import (EQUAL_STEPS, OWN_BEST, TASKS, TESTS, ahead_behind, designs,
                                                   stage1_steps)

STEP_KEYS = ("train.stage1_steps", "train.stage1_until.max_steps")  # the keys that set the training length


def median_steps(metrics: Path) -> int | None:
    """The median stage-1 steps over a setting's replicates (its stage1.json), None where none is kept."""
    found = read_json_if_present(metrics / "stage1.json") or {}
    steps = [r["steps"] for r in found.values() if r.get("steps") is not None]
    return round(statistics.median(steps)) if steps else None


def findings(found: dict, setting: str) -> set[str]:
    """The design's findings in one view: "ahead on held-out count", "behind on seen caption"."""
    ahead, behind = ahead_behind(found, setting)
    return {f"ahead on {cell}" for cell in ahead} | {f"behind on {cell}" for cell in behind}


ORDER = [f"{way} on {label} {task}" for way in ("ahead", "behind") for _, label in reversed(TESTS)
         for task, _ in TASKS]  # the pages' order: ahead first, held-out pairs first, the tasks as the tables have them


def other_keys(own: dict, equal: dict) -> list[str]:
    """The setting keys, other than the training length's, whose values differ between the two views."""
    a, b = ({k: v for k, v in facts.get("setting", {}).items() if k not in STEP_KEYS} for facts in (own, equal))
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def survival(root: Path) -> dict[str, dict[str, list[str]]]:
    """{setting: {"survived", "lost", "new"}: findings} for each design both views hold beside their MLP, in the
    own-best view's order."""
    own, equal = designs(root, OWN_BEST), designs(root, EQUAL_STEPS)
    if "mlp" not in own or "mlp" not in equal:
        return {}
    out = {}
    for setting in own:
        if setting.startswith("mlp") or setting not in equal:
            continue
        mine, same = findings(own, setting), findings(equal, setting)
        out[setting] = {"survived": _ordered(mine & same), "lost": _ordered(mine - same), "new": _ordered(same - mine)}
    return out


def _ordered(cells: set[str]) -> list[str]:
    return sorted(cells, key=ORDER.index)


def _listed(cells: list[str]) -> str:
    """"ahead on held-out caption, count; behind on seen binding": one group a direction and pair set, or "none"."""
    groups: dict[str, list[str]] = {}
    for cell in cells:
        head, task = cell.rsplit(" ", 1)
        groups.setdefault(head, []).append(task)
    return "; ".join(f"{head} {', '.join(tasks)}" for head, tasks in groups.items()) if groups else "none"


def survival_lines(root: Path) -> list[str]:
    """docs/connectors.md's paragraphs: per design, the findings that survived equal steps, those lost and those
    new, with the stage-1 steps each view trained it and its MLP; [] before both views hold a design."""
    table = survival(root)
    if not table:
        return []
    own, equal = designs(root, OWN_BEST), designs(root, EQUAL_STEPS)
    steps = stage1_steps(root, EQUAL_STEPS)
    at = f"{steps:,} stage-1 steps" if steps is not None else "the same stage-1 steps"
    out = [f"**Own best against equal steps.** A finding is a cell where a design is ahead of its view's MLP in every "
           f"replicate, or behind it in every one. Here each finding of the own-best view is set beside the "
           f"equal-steps view, where every design and its MLP trained {at}.", ""]
    mlp_steps = median_steps(own["mlp"][1])
    for setting, cells in table.items():
        mine = median_steps(own[setting][1])
        trained = (f"At its own best it trained a median {mine:,} stage-1 steps, its MLP {mlp_steps:,}."
                   if mine is not None and mlp_steps is not None else "")
        moved = other_keys(own[setting][0], equal[setting][0])
        setting_note = (f"Its setting differs between the views in {', '.join(moved)} too, so a lost finding may "
                        "come from the setting as well as the steps." if moved else "")
        said = [trained, setting_note, f"Survived: {_listed(cells['survived'])}.",
                f"Lost at equal steps: {_listed(cells['lost'])}.", f"New at equal steps: {_listed(cells['new'])}."]
        out += [f"**{setting}.** " + " ".join(s for s in said if s), ""]
    return out
