"""Two sentences of a compared setting's paragraph (comparison/report/tables.py): how its stage 1 ended beside its
seen test captions, and what the design did inside (gates, queries' attention spread, codes used)."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present

# Where the median share of seen test captions exact is below this fraction of the median share of training captions
# exact at the stop rule's last check, the setting learned its training pictures rather than what they show: the
# seen test pairs hold the same shapes and colours as training, on pictures it never trained on.
LEARNED_PICTURES = 0.25


def per_replicate(metrics: Path, recipe: str, test: str, task: str) -> dict:
    """{replicate: {right, gap}} of one task and pair set in a setting's replicates.json ({} where absent)."""
    return ((read_json_if_present(metrics / "replicates.json") or {}).get(recipe, {}).get(test, {}).get(task) or {})


def stage1_sentence(metrics: Path) -> str:
    """How long stage 1 trained and where it ended, over the replicates (the setting's stage1.json: each replicate's
    steps and its stop rule's checks), beside its exact captions of the seen test pairs: the stop rule reads training
    pictures, so a design that learns them and not the pairs shows here. Empty where none is kept."""
    runs = read_json_if_present(metrics / "stage1.json") or {}
    runs = [run for run in runs.values() if run.get("curve")]
    if not runs:
        return ""
    steps, ends = [run["steps"] for run in runs], [run["curve"][-1][1] for run in runs]
    seen = [r["right"] for r in per_replicate(metrics, "caption", "seen", "caption").values()]
    test = "" if not seen else (f", against {_range(seen)}% of the seen test pairs' captions (pictures it never "
                                "trained on)")
    return (f" Stage 1 trained {statistics.median(steps):g} steps [{min(steps)}–{max(steps)}] over {len(runs)} "
            f"replicate{'s' if len(runs) != 1 else ''}, its last check at {_range(ends)}% of the stop rule's training "
            f"captions exact{test}.{_learned_pictures(ends, seen) if seen else ''}")


def _learned_pictures(ends: list[float], seen: list[float]) -> str:
    """The words for a setting whose seen test captions fall below LEARNED_PICTURES of its training captions."""
    train, test = statistics.median(ends), statistics.median(seen)
    if test >= LEARNED_PICTURES * train:
        return ""
    return (f" Its seen test share is under {LEARNED_PICTURES:.0%} of its training share: it learned its training "
            "pictures, not what they show (stage1.json's checks against replicates.json's seen captions).")


def _range(values: list[float]) -> str:
    return f"{statistics.median(values):.4g} [{min(values):.4g}–{max(values):.4g}]"


def inside_sentence(facts: dict) -> str:
    """What the design did inside, at its first and last look (design.json's `inside`, from its first replicate's
    stage 1): the gates' tanh, the queries' attention spread, the codes used; empty for a design with nothing to
    show."""
    looks = facts.get("inside") or []
    if not looks:
        return ""
    first, last = looks[0], looks[-1]

    def said(look: dict) -> str:
        parts = []
        if "gates" in look:
            parts.append(f"gates' tanh {', '.join(f'{g:g}' for g in look['gates'])}")
        if "query_entropy" in look:
            spread = look["query_entropy"]
            parts.append(f"queries' attention spread {statistics.median(spread):.2f} (median; "
                         f"{min(spread):.2f}–{max(spread):.2f}), {look['on_patches']:.0%} of it on the patches")
        if "codes_used" in look:
            parts.append(f"{look['codes_used']:,} codes used ({look['codes_share']:.0%})")
        return "; ".join(parts)
    return (f" Inside (its first replicate's stage 1): at step {first['step']} {said(first)}; at step "
            f"{last['step']} {said(last)}.")
