"""The results page's reading of the default run: what it shows and what it cannot, in sentences whose every number
comes from metrics/shapes/ (scores.json, controls.json, replicates.json, paired.json), so the prose stays as true as
the tables. Every sentence that states a finding is chosen by the numbers (other numbers, another sentence): the
picture is called read only where every replicate beats every control, and a recipe is called ahead of another only
where paired.json's interval supports it."""

from __future__ import annotations

from itertools import combinations

from frozenbridge.shapes.data.vocab import CONTROLS, TESTS
from frozenbridge.shapes.report.analysis_tables import NUMBER_WORDS, paired_evidence, paired_verdict

TEST_LABELS = {"seen": "seen pairs", "heldout": "held-out pairs"}


def _pct(v: float) -> str:
    return f"{v:g}%"


def _cell(scores: dict, recipe: str, test: str, task: str) -> dict | None:
    return scores.get(recipe, {}).get(test, {}).get(task)


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def stage1_sentence(scores: dict, controls: dict) -> str | None:
    """Stage-1 captions against the controls; "reads the picture" on a test set only where the lowest replicate's
    right-picture score is above every replicate of every control there."""
    if "caption" not in scores:
        return None
    right = {t: scores["caption"][t]["caption"]["right"] for t in TESTS}
    best_control = {t: max(controls["caption"][t]["caption"][c]["max"] for c in CONTROLS) for t in TESTS}
    worst_control = max(best_control.values())
    above = [t for t in TESTS if right[t]["min"] > best_control[t]]
    if len(above) == len(TESTS):
        head = "**The model reads the picture.**"
        verdict = ", below every replicate's right-picture score on both test sets"
    elif above:
        head = f"**The model reads the picture on {_and([TEST_LABELS[t] for t in above])} only.**"
        verdict = "; " + _and([f"on {TEST_LABELS[t]} the lowest replicate ({_pct(right[t]['min'])}) is not above "
                               f"the best control ({_pct(best_control[t])})" for t in TESTS if t not in above])
    else:
        head = "**No sign that the model reads the picture.**"
        verdict = ("; on both test sets the best control gets as much as or more than the lowest replicate with the "
                   "right picture")
    return (f"{head} Trained on captions alone (stage 1), the connector makes the frozen language model write "
            f"{_pct(right['seen']['median'])} of seen-pair test captions exactly, every shape in order (median over "
            f"replicates; lowest replicate {_pct(right['seen']['min'])}), and {_pct(right['heldout']['median'])} of "
            f"held-out-pair ones (lowest {_pct(right['heldout']['min'])}). With a blank picture, another scene's "
            f"picture or none, no replicate gets more than {_pct(worst_control)} right{verdict}.")


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
    if not parts and not held:
        return None
    asked = [(test, task) for test in TESTS for task in ("count", "binding", "leftmost")
             if _cell(scores, recipe, test, task)]
    clear = [f"{task} on {TEST_LABELS[test]}" for test, task in asked
             if _cell(scores, recipe, test, task)["gap"]["min"] > 0]
    unclear = [f"{task} on {TEST_LABELS[test]}" for test, task in asked
               if _cell(scores, recipe, test, task)["gap"]["min"] <= 0]
    if not unclear:
        tally = "Every replicate's gap is above zero on every task and test set"
    elif not clear:
        tally = "No task's gap is above zero on every replicate"
    else:
        tally = f"Every replicate's gap is above zero for {_and(clear)}; not for {_and(unclear)}"
    controls = NUMBER_WORDS.get(len(CONTROLS), str(len(CONTROLS)))
    return (f"**Questions after captions ({recipe}).** On seen pairs: {', '.join(parts) or 'no questions'}; the gap "
            f"is the right picture's score minus the best of the {controls} controls. On held-out pairs: "
            f"{', '.join(held) or 'no questions'}. {tally}.")


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
    listed = ", ".join(f"{ra[r]['right']:g} vs {rb[r]['right']:g}" for r in common)
    more, fewer = cell["behind"], cell["ahead"]  # the pair's first recipe is `a`: a behind = b more right
    head = "Captioning first" if (a, b) == ("qa", "caption_qa") else f"{b} against {a}"
    where = "on pairs never seen in training" if test == "heldout" else f"on {TEST_LABELS.get(test, test)}"
    evidence = paired_evidence(cell, flip=True)
    return (f"**{head}, {where}.** {task.capitalize()} on {TEST_LABELS.get(test, test)}, % right, {a} vs {b}: "
            f"{listed} ({_replicates(common)}). Replicate by replicate, {b} − {a}: more questions right in {more}, "
            f"fewer in {fewer}, as many in {cell['tied']} of {cell['replicates']} replicates. "
            f"{evidence[0].upper()}{evidence[1:]}: {paired_verdict(cell, a, b)}.")


def _replicates(names: list[str]) -> str:
    """"replicates 0 to 4" where they run on without a gap, else "replicates 0, 2, 5" ("replicate 3" alone)."""
    numbers = [int(n) for n in names]
    if len(numbers) == 1:
        return f"replicate {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"replicates {numbers[0]} to {numbers[-1]}"
    return f"replicates {', '.join(map(str, numbers))}"


def _within_spread(scores: dict) -> tuple[int, int]:
    """(how many differences between two recipes' medians, on one task and test set, are smaller than the wider of
    the two recipes' min–max ranges; how many differences there are)."""
    small = total = 0
    for test in TESTS:
        tasks = {task for tests in scores.values() for task, c in tests.get(test, {}).items()
                 if isinstance(c, dict) and "right" in c}
        for task in sorted(tasks):
            cells = [c["right"] for tests in scores.values() if (c := tests.get(test, {}).get(task))]
            for x, y in combinations(cells, 2):
                total += 1
                small += abs(x["median"] - y["median"]) < max(x["max"] - x["min"], y["max"] - y["min"])
    return small, total


def spread_sentence(scores: dict, replicates: int | None = None) -> str | None:
    """The widest min-max range among the scores, and how many differences between medians it leaves unresolved."""
    spans = [(c["right"]["max"] - c["right"]["min"], recipe, test, task)
             for recipe, tests in scores.items() for test in TESTS
             for task, c in tests.get(test, {}).items() if isinstance(c, dict) and "right" in c]
    if not spans:
        return None
    span, recipe, test, task = max(spans)
    small, total = _within_spread(scores)
    who = f"The {replicates} replicates" if replicates else "Replicates"
    if span == 0:
        return (f"**What it cannot show.** {who} give every score exactly alike: they show no spread to judge a "
                "difference by.")
    text = (f"**What it cannot show.** {who} disagree by up to {span:g} points ({recipe}, {task}, "
            f"{TEST_LABELS.get(test, test)})")
    if total:
        text += (f". {small} of the {total} differences between two recipes' medians (same task, same test set) are "
                 "smaller than the wider of the two recipes' min–max ranges, so they do not separate the recipes "
                 "here")
    return text + "."


def _replicate_count(reps: dict | None) -> int | None:
    """How many replicates replicates.json holds (the most any cell has), or None without it."""
    counts = [len(cell) for tests in (reps or {}).values() for tasks in tests.values() for cell in tasks.values()
              if isinstance(cell, dict)]
    return max(counts) if counts else None


def reading(scores: dict, controls: dict, reps: dict | None, pairs: dict | None) -> list[str]:
    sentences = [stage1_sentence(scores, controls), stage2_sentence(scores),
                 paired_sentence(reps or {}, pairs or {}), spread_sentence(scores, _replicate_count(reps))]
    out: list[str] = []
    for s in sentences:
        if s:
            out += [s, ""]
    return out
