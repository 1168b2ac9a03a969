"""The audit page's closing parts: why a run without captions matters on held-out combinations, the agreement
with the shapes study on its own pictures, and the direct answer to "is it ready?"."""

from __future__ import annotations

from frozenbridge.audit.evaluation.agreement import STUDY_RECIPES, STUDY_TESTS
from frozenbridge.audit.report.failures import commonest
from frozenbridge.audit.report.rules import (MARGIN, adds_little, control_score, falling_kinds, heldout_falls,
                                             not_above_zero, probe_verdict, seen_and_heldout)
from frozenbridge.audit.report.sections import CONTROL_PHRASES
from frozenbridge.audit.report.words import joined, md_cell, md_table, num, pct
from frozenbridge.audit.summary.figure import kind_order


FAILURE_PHRASES = {
    "another_question": "the right answer to another question on the same picture, a value tied to the wrong thing",
    "blank_answer": "what it also says with a blank picture, an answer from the wording alone",
    "other": "neither another question's answer nor its blank-picture answer",
}


def study_binding(reference: dict | None) -> dict | None:
    try:
        return {r: {t: reference[r][t]["binding"] for t in STUDY_TESTS} for r in STUDY_RECIPES}
    except (KeyError, TypeError):
        return None


def no_captions_paragraph(numbers: dict) -> str | None:
    """Why stage 1's absence matters on held-out combinations, with the shapes study's numbers when the JSON has
    them; None when stage 1 ran."""
    if numbers["training"].get("stage1") is not None:
        return None
    if numbers["folder"].get("has_captions"):
        text = ["Stage 1 did not run, so the connector learned from questions alone, though the training pictures "
                "have captions. That matters most on combinations training never showed."]
    else:
        text = ['Stage 1 was skipped: no training picture has a caption ("text"), so the connector learned from '
                "questions alone. That matters most on combinations training never showed."]
    binding = study_binding(numbers.get("study_reference"))
    if binding:
        text.append(f"In the shapes study, binding questions on held-out pairs scored "
                    f"{pct(binding['caption_qa']['heldout'])} after captions then questions and "
                    f"{pct(binding['qa']['heldout'])} from questions alone (medians of its replicates). On seen "
                    f"pairs the two scored {pct(binding['caption_qa']['seen'])} and {pct(binding['qa']['seen'])}.")
    else:
        text.append("In the shapes study, learning to describe pictures first is what kept a color tied to its shape "
                    "on pairs never trained on, while on familiar pairs the recipe without captions looked as good.")
    if not numbers["folder"].get("has_captions"):
        text.append('Captions on the training pictures ("text" in train/metadata.jsonl) would let stage 1 run.')
    return " ".join(text)


def agreement_section(numbers: dict) -> list[str]:
    agreement = numbers.get("agreement")
    if not agreement or not agreement.get("rows"):
        return []
    rows = agreement["rows"]
    within = sum(bool(r["within"]) for r in rows)
    return ["## Against the shapes study", "",
            f"These are the shapes study's own pictures, exported as a folder. The audit's number lies within the "
            f"range of the study's replicates on {within} of the {len(rows)} rows below (scores in percent, gaps in "
            f"points).", "",
            *md_table(["what", "audit", "study lowest", "study median", "study highest", "within the range"],
                    [[md_cell(r["what"]), num(r["audit"]), num(r["study_min"]), num(r["study_median"]),
                      num(r["study_max"]), "yes" if r["within"] else "no"] for r in rows])]


def closing_paragraph(numbers: dict, margin: float = MARGIN) -> str:
    """A direct answer to "is it ready?". "Not yet" when the picture makes no clear difference (a gap's interval,
    overall or for a kind, not above zero), adds under `margin` points for a kind, or held-out combinations score
    more than `margin` points below seen ones (overall or for a kind); otherwise "On these checks, yes". Then the
    score, the best control and the gap, which kinds the picture matters for, held-out against seen, what the wrong
    answers mostly were, where the probe finds the detail in the encoder but the model does not use it, and where
    it does not find it (more question data unlikely to help, unless the model beats the probe by `margin`)."""
    checks = numbers["checks"]
    overall, kinds = checks["overall"], checks.get("kinds", {})
    order = kind_order(kinds)
    zero = [k for k in order if not_above_zero(kinds[k])]
    small = [k for k in order if adds_little(kinds[k], margin)]
    sh = checks.get("seen_heldout")
    seen, held = seen_and_heldout(sh)
    compared = seen is not None and held is not None
    falls = heldout_falls(seen, held, margin)
    falling = falling_kinds(sh, margin) if sh is not None else []

    reasons = []
    if not_above_zero(overall):
        reasons.append("over all questions the picture makes no clear difference (the gap's interval is not above "
                       "zero)")
    if zero:
        reasons.append(f"for {joined(zero)} the gap's interval is not above zero, so it answers "
                       f"{'that kind' if len(zero) == 1 else 'those kinds'} as well without looking")
    if small:
        reasons.append(f"for {joined(small)} the picture adds under {num(margin)} points")
    if falls:
        s, h = seen["score"]["right"], held["score"]["right"]
        reasons.append(f"held-out combinations score {pct(h)}, {num(s - h)} points below seen ones ({pct(s)})")
    elif falling:
        reasons.append(f"held-out {joined(falling)} questions score more than {num(margin)} points below seen ones")
    if reasons:
        text = [f"Not yet: {'; '.join(reasons)}."]
    else:
        every = "for every kind" if kinds else "over all questions"
        text = [f"On these checks, yes: {every} the picture adds at least {num(margin)} points over the best control, "
                f"with an interval above zero" + (f", and held-out combinations score no more than {num(margin)} "
                                                  f"points below seen ones." if compared else ".")]
    lo, hi = overall["gap_interval"]
    text.append(f"With its own picture the model answers {pct(overall['score']['right'])} of the test questions; "
                f"the best control, {CONTROL_PHRASES[overall['best_control']]}, gets {pct(control_score(overall))}, "
                f"a gap of {num(overall['gap'])} points (interval {num(lo)} to {num(hi)}).")
    weak = [k for k in order if k in zero or k in small]
    matters = [k for k in order if k not in weak]
    if matters and weak:
        text.append(f"The picture matters for {joined(matters)}, not for {joined(weak)}.")
    elif matters and len(matters) > 1:
        text.append(f"The picture matters for each kind: {joined(matters)}.")
    elif weak and len(weak) > 1:
        text.append(f"The picture matters for none of the kinds: {joined(weak)}.")
    if compared and not falls:
        text.append(f"Held-out combinations score {pct(held['score']['right'])} against "
                    f"{pct(seen['score']['right'])} seen.")
    elif not compared and held is not None:
        text.append("Every test picture is marked held-out, so there are no seen combinations to compare with.")
    elif not compared:
        text.append("No test picture was marked held-out, so nothing here says how it does on combinations it never "
                    "trained on.")
    failures = checks["failures"]
    top = commonest(failures["classes"])
    if failures["wrong"] and top:
        n = failures["classes"][top[0]]
        lead = "Most wrong answers" if 2 * n > failures["wrong"] else "The commonest wrong answers"
        text.append(f"{lead} ({n} of {failures['wrong']}{' each' if len(top) > 1 else ''}) were "
                    f"{' or '.join(FAILURE_PHRASES[c] for c in top)}.")
    elif not failures["wrong"]:
        text.append("It got every test question right with its picture.")
    entries = (numbers.get("probe") or {}).get("kinds", {})
    unused = [k for k in kind_order(entries) if probe_verdict(entries[k], margin) == "unused"]
    absent = [k for k in kind_order(entries) if probe_verdict(entries[k], margin) == "absent"]
    if unused:
        text.append(f"For {joined(unused)} a linear probe finds the answer in the encoder's features but the model "
                    f"does not use it: the connector and the language model are where to look.")
    beyond = [k for k in absent if entries[k]["model"] >= entries[k]["probe"] + margin]
    missing = [k for k in absent if k not in beyond]
    if missing:
        text.append(f"For {joined(missing)} a linear probe does not find it in the encoder's features and the model "
                    f"scores less than {num(margin)} points above the probe, so more question data is unlikely to "
                    f"help.")
    if beyond:
        text.append(f"For {joined(beyond)} the model does better than a linear probe on the encoder's features, so the "
                    f"probe is no guide there.")
    return " ".join(text)
