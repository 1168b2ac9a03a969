"""The settings the connector comparison runs, for each of its two views. A setting's values are dotted keys under
params.yaml's shapes: section, as `dvc exp run -S shapes.<key>=<value>` sets them; every other key stays as
params.yaml has it.

- The equal-settings view (results/connectors/equal-settings/): each design at the MLP's settings, paired with the
  default run's MLP. Kept as the first comparison made.
- The own-best view (results/connectors/<setting>/): each design at its own best, as the sweep picked it
  (results/connectors/sweep/picked.json, by the rule its plan declared before any run), the MLP at its own best
  among them. Stage 1 may train up to the sweep's cap (`train.stage1_until.max_steps`), so a design that learns
  slower than the MLP still gets as many steps as the sweep gave its pick. resampler-16 takes the pick of the
  resampler swept at its default 49 queries, and cross_attention-6 that of cross_attention-4; cross_attention-6 is
  compared only when cross_attention at its best reaches the plan's threshold within the cap (if every-4th-layer
  blocks never caption, fewer blocks answer nothing more).
- The equal-steps view (results/connectors/equal-steps/<setting>/): the same six settings, the MLP among them, each
  at the setting whose sweep curve reached the highest share within the cap (picked.json's `at_cap`,
  sweep/pick.py's pick_at_cap), and every one trained exactly the cap's stage-1 steps: `train.stage1_steps`
  is the cap, so the stop rule's first and only check is at the cap, where it reads the training captions once and
  stage 1 ends whatever the share. So a design that learns slower gets no more steps than the MLP, nor fewer.
"""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.plan import DEFAULT_PATH, load_plan

PICKED = DEFAULT_PATH.parent / "picked.json"

EQUAL_SETTINGS: dict[str, dict[str, object]] = {
    "resampler-49": {"connector.design": "resampler", "connector.resampler.latents": 49},
    "resampler-16": {"connector.design": "resampler", "connector.resampler.latents": 16},
    "cross_attention-4": {"connector.design": "cross_attention", "connector.cross_attention.every": 4},
    "cross_attention-6": {"connector.design": "cross_attention", "connector.cross_attention.every": 6},
    "codebook-1024": {"connector.design": "codebook", "connector.codebook.codes": 1024},
}

# the own-best view's settings: each one's design and the knob that names it; the design's pick goes over them
OWN_BEST: dict[str, dict[str, object]] = {"mlp": {"connector.design": "mlp"}, **EQUAL_SETTINGS}
NEEDS_LEARNING = {"cross_attention-6": "cross_attention"}  # compared only where this design at its best reaches the
# plan's threshold


VIEW_NAMES = ("own-best", "equal-settings", "equal-steps")  # comparison --view


def design_of(values: dict[str, object]) -> str:
    return str(values["connector.design"])


def _picks(picked: Path, part: str) -> dict:
    """picked.json's `part` ("picked": the plan's rule; "at_cap": the equal-steps view's), {} before the sweep."""
    try:
        found = json.loads(Path(picked).read_text()) if Path(picked).is_file() else {}
        return found[part] if found else {}
    except (json.JSONDecodeError, KeyError) as err:
        raise FrozenbridgeError(f"{picked}: not the sweep's picks ({err}); `python -m frozenbridge.comparison.sweep "
                                "--pick` writes them again from its rows") from None


def own_best(picked: Path = PICKED, plan: Path = DEFAULT_PATH) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """({setting: values} ready to run, {setting: why it is not}) from the sweep's picks and plan: a setting waits
    while its design has no pick (the sweep has not run its whole grid), and cross_attention-6 is left out while
    cross_attention at its best never reaches the threshold."""
    declared = load_plan(plan)
    return _settings(_picks(picked, "picked"), _picks(picked, "picked"), declared,
                     {"train.stage1_until.max_steps": declared.cap})


def equal_steps(picked: Path = PICKED, plan: Path = DEFAULT_PATH) -> tuple[dict[str, dict[str, object]],
                                                                        dict[str, str]]:
    """The equal-steps view's settings, as own_best gives its own: each design at its `at_cap` pick, stage 1 trained
    exactly the plan's cap (stage1_steps and max_steps both the cap). cross_attention-6 waits on the same condition
    as in the own-best view (the plan's pick of cross_attention reaching the threshold), so the two views compare the
    same settings."""
    declared = load_plan(plan)
    return _settings(_picks(picked, "at_cap"), _picks(picked, "picked"), declared,
                     {"train.stage1_steps": declared.cap, "train.stage1_until.max_steps": declared.cap})


def _settings(chosen_by: dict, picks: dict, declared, steps: dict[str, object]) -> tuple[dict, dict]:
    ready, waiting = {}, {}
    for name, base in OWN_BEST.items():
        design = design_of(base)
        chosen = chosen_by.get(design)
        if chosen is None:
            waiting[name] = (f"waits for the sweep's pick of {design} (`python -m frozenbridge.comparison.sweep "
                             f"--design {design}` runs the rest of its grid, `--pick` writes its picks)")
            continue
        if (needed := NEEDS_LEARNING.get(name)) and picks.get(needed, {}).get("steps_to_threshold") is None:
            waiting[name] = (f"not compared: {needed} at its best ({picks[needed]['setting']}) never reaches "
                             f"{declared.threshold:g}% exact within the sweep's {declared.cap} steps")
            continue
        ready[name] = {**base, **chosen["values"], **steps}
    return ready, waiting


def view_settings(view: str) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """({setting: values}, {setting: why it waits}) of one view of comparison (VIEW_NAMES)."""
    if view == "own-best":
        return own_best()
    if view == "equal-steps":
        return equal_steps()
    return dict(EQUAL_SETTINGS), {}
