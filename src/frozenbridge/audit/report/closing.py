"""The audit page's closing parts: why a run without captions matters on held-out combinations, the agreement
with the shapes study on its own pictures, and the direct answer to "is it ready?"."""

from __future__ import annotations

from frozenbridge.audit.evaluation.agreement import STUDY_RECIPES, STUDY_TESTS, WHAT
from frozenbridge.audit.evaluation.curve import SETTINGS
from frozenbridge.audit.report.before import PHASE_WORDS, still_learning
from frozenbridge.audit.report.failures import commonest
from frozenbridge.audit.report.rules import (MARGIN, adds_little, control_score, falling_kinds, heldout_falls,
                                             not_above_zero, probe_verdict, seen_and_heldout)
from frozenbridge.audit.report.sections import CONTROL_PHRASES
from frozenbridge.audit.report.words import counted, joined, md_table, num, pct
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


def agreement_row(r: dict) -> list:
    a, s, p = r["audit_spread"], r["study_spread"], r["paired"]
    diff = "" if p is None else (f"{num(p['median_difference'])} [{num(p['interval']['low'])}, "
                                 f"{num(p['interval']['high'])}]")
    verdict = ("" if p is None else "audit higher" if p["supported"] == "first" else
               "audit lower" if p["supported"] == "second" else "no difference shown")
    return [f"{r['kind']}, {'held-out' if r['test'] == 'heldout' else r['test']}, {WHAT[r['what']]}",
            f"{num(a['median'])} [{num(a['min'])}, {num(a['max'])}]",
            f"{num(s['median'])} [{num(s['min'])}, {num(s['max'])}]", diff, verdict]


def on_purpose(numbers: dict, agreement: dict) -> list[str]:
    """What still differs between the two on purpose, from the numbers: the questions asked, stage 1's steps and the
    scoring of an answer's case."""
    rows = agreement["rows"]
    audit_items = sorted({r["audit_items"] for r in rows if r.get("audit_items")})
    study_items = sorted({r["study_items"] for r in rows if r.get("study_items")})
    text = ["A folder has no tasks: the audit groups its questions by kind, and the export writes each of the study's "
            "tasks as a kind, so the groups are the study's."]
    if audit_items and study_items:
        text.append(f"What still differs on purpose: the audit asks every test question of a kind and test set "
                    f"({num(audit_items[0])} to {num(audit_items[-1])} a cell), the study the first "
                    f"{num(study_items[-1])} of each.")
    steps = agreement.get("study_stage1_steps") or {}
    audit_steps = numbers["settings"]["stage1_steps"]
    if steps:
        same = [r for r, n in sorted(steps.items(), key=lambda kv: int(kv[0])) if n == audit_steps]
        stopped = joined([str(n) for _, n in sorted(steps.items(), key=lambda kv: int(kv[0]))])
        alike = (f"replicates {joined(same)} took the same steps from the same seeds in both" if len(same) > 1 else
                 f"replicate {same[0]} took the same steps from the same seeds in both" if same else
                 "no replicate took the same steps in both")
        text.append(f"The audit trains stage 1 for {audit_steps} caption steps; the study's rule stopped its "
                    f"replicates at {stopped}, so {alike}.")
    text.append("The audit compares answers lower-cased (a folder's answers may be capitalized), the study as "
                "written; both trim the ends.")
    return text


def agreement_section(numbers: dict) -> list[str]:
    """The audit of the study's own pictures beside the study, range against range and paired replicate by
    replicate; empty when the folder is not the study's export or its metrics are not there."""
    agreement = numbers.get("agreement")
    if not agreement or not agreement.get("rows"):
        return []
    rows = agreement["rows"]
    paired = [r["paired"] for r in rows if r["paired"] is not None]
    pairs = paired[0]["replicates"] if paired else 0
    coverage = num(100 * paired[0]["interval"]["coverage"]) if paired else ""
    differ = [r for r in rows if r["paired"] is not None and r["paired"]["supported"] is not None]
    text = [f"These are the shapes study's own pictures, exported as a folder, set beside the study's "
            f"{agreement['recipe']} runs (scores in percent, gaps in points, median [lowest, highest]).",
            f"Each audit replicate starts from the study's seed streams of the same replicate, so the two pair: the "
            f"last columns give the audit's number minus the study's over {counted(pairs, 'replicate')}, its median "
            f"and exact interval ({coverage}% coverage), the rule of the verdict table."]
    if differ:
        text.append(f"The paired interval excludes zero on {len(differ)} of the {len(rows)} rows: "
                    f"{joined([agreement_row(r)[0] for r in differ])}.")
    else:
        text.append(f"The paired interval includes zero on every row: on these {len(rows)} numbers the audit and "
                    f"the study show no difference.")
    text.append(f"The audit's median lies within the study's range on {agreement['within']} of the {len(rows)} "
                f"rows.")
    return ["## Against the shapes study", "", " ".join(text), "", " ".join(on_purpose(numbers, agreement)), "",
            *md_table(["what", "audit", "study", "audit minus study, paired [interval]", "paired rule"],
                      [agreement_row(r) for r in rows])]


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

    learning = still_learning(numbers)
    reasons = []
    if learning:
        phases = joined([f"{PHASE_WORDS[p]} steps (`{SETTINGS[p]}`)" for p in learning])
        reasons.append(f"the runs were still learning when they stopped; train more {phases} before reading the "
                       f"gaps")
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
    if unused and learning:
        text.append(f"For {joined(unused)} a linear probe finds the answer in the encoder's features and the model "
                    f"does not use it yet: it was still learning, so train longer before blaming the connector and "
                    f"the language model.")
    elif unused:
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
