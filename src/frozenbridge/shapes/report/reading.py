"""The results page's reading of the default run: what it shows and what it cannot, in sentences whose every number
comes from metrics/shapes/ (scores.json, controls.json, replicates.json, paired.json), so the prose stays as true as
the tables; a recipe is called ahead of another only where paired.json's interval supports it."""

from __future__ import annotations

from frozenbridge.shapes.data.vocab import CONTROLS, TESTS
from frozenbridge.shapes.report.analysis_tables import paired_evidence, paired_verdict


def _pct(v: float) -> str:
    return f"{v:g}%"


def _cell(scores: dict, recipe: str, test: str, task: str) -> dict | None:
    return scores.get(recipe, {}).get(test, {}).get(task)


def stage1_sentence(scores: dict, controls: dict) -> str | None:
    if "caption" not in scores:
        return None
    seen, held = scores["caption"]["seen"]["caption"]["right"], scores["caption"]["heldout"]["caption"]["right"]
    worst_control = max(controls["caption"][t]["caption"][c]["max"] for t in TESTS for c in CONTROLS)
    return (f"**The model reads the picture.** Trained on captions alone (stage 1), the connector makes the frozen "
            f"language model write {_pct(seen['median'])} of seen-pair test captions exactly (median over "
            f"replicates; lowest replicate {_pct(seen['min'])}) and {_pct(held['median'])} of held-out-pair ones "
            f"(lowest {_pct(held['min'])}), every shape in the right order. With a blank picture, another scene's "
            f"picture or none, no replicate gets more than {_pct(worst_control)} right.")


def stage2_sentence(scores: dict, recipe: str = "caption_qa") -> str | None:
    if recipe not in scores:
        return None
    parts = []
    for task in ("count", "binding", "leftmost"):
        cell = _cell(scores, recipe, "seen", task)
        if cell:
            parts.append(f"{task} {_pct(cell['right']['median'])} (gap {cell['gap']['median']:g} points, lowest "
                         f"replicate {cell['gap']['min']:g})")
    held = [f"{task} {_pct(c['right']['median'])} (gap {c['gap']['median']:g})"
            for task in ("count", "binding", "leftmost") if (c := _cell(scores, recipe, "heldout", task))]
    return (f"**Questions after captions ({recipe}).** On seen pairs: {', '.join(parts)}; the gap is the right "
            f"picture's score minus the best of the three controls. On held-out pairs: {', '.join(held)}.")


def paired_sentence(reps: dict, pairs: dict, a: str = "qa", b: str = "caption_qa", test: str = "heldout",
                    task: str = "binding") -> str | None:
    """Replicate by replicate, `b` against `a` (replicates are paired: same start, same questions): the scores from
    replicates.json, and from paired.json the counts, the median difference with its exact interval and the sign
    test; `b` is called ahead only where the interval supports it."""
    ra, rb = reps.get(a, {}).get(test, {}).get(task), reps.get(b, {}).get(test, {}).get(task)
    cell = pairs.get(f"{a} vs {b}", {}).get(test, {}).get(task)
    if not ra or not rb or not cell:
        return None
    common = sorted(set(ra) & set(rb), key=int)
    listed = ", ".join(f"replicate {r}: {ra[r]['right']:g} vs {rb[r]['right']:g}" for r in common)
    more, fewer = cell["behind"], cell["ahead"]  # the pair's first recipe is `a`: a behind = b more right
    return (f"**Captioning first, on pairs never seen in training.** {task.capitalize()} on held-out pairs, {a} vs "
            f"{b} (% right), {listed}. {b} − {a}, replicate by replicate: more questions right in {more}, fewer in "
            f"{fewer}, as many in {cell['tied']} of {cell['replicates']} replicates; "
            f"{paired_evidence(cell, flip=True)}: {paired_verdict(cell, a, b)}.")


def spread_sentence(scores: dict) -> str | None:
    """The widest min-max range among question scores: what the replicate count cannot resolve."""
    spans = [(c["right"]["max"] - c["right"]["min"], recipe, test, task)
             for recipe, tests in scores.items() for test in TESTS
             for task, c in tests.get(test, {}).items() if isinstance(c, dict) and "right" in c]
    if not spans:
        return None
    span, recipe, test, task = max(spans)
    return (f"**What it cannot show.** Replicates disagree by up to {span:g} points ({recipe}, {task}, {test} "
            "pairs), so a difference between two recipes' medians smaller than their ranges is not a finding here; "
            "the five-seed follow-up (docs/shapes.md, What to run next) is one command.")


def reading(scores: dict, controls: dict, reps: dict | None, pairs: dict | None) -> list[str]:
    sentences = [stage1_sentence(scores, controls), stage2_sentence(scores),
                 paired_sentence(reps or {}, pairs or {}), spread_sentence(scores)]
    out: list[str] = []
    for s in sentences:
        if s:
            out += [s, ""]
    return out
