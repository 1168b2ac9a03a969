"""The audit's page: audit.md and its figure audit.png, written from the audit's JSON alone.

The page follows the four checks a score needs before it means anything: the score without the picture (the gap to
the best of a blank picture, another picture and none, not the score itself), the score broken down by what the
question needs (its kind), held-out combinations against seen ones, and the failures read (what the wrong answers
were; whether a linear probe finds the detail in the frozen encoder's features). It closes with a direct answer to
"is it ready?". Every number on the page is read from the JSON, and every sentence that states a finding is chosen
by a rule on those numbers (`margin` points, an interval that includes zero), so the prose stays as true as the
tables."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.audit.evaluation.agreement import STUDY_RECIPES, STUDY_TESTS
from frozenbridge.audit.summary.figure import NO_KIND, kind_order

MARGIN = 10.0
EXAMPLES = 8
CONTROL_PHRASES = {"blank": "a blank picture", "other": "another test picture", "none": "no picture at all"}
FAILURE_HEADS = {"another_question": "another question's answer", "blank_answer": "its blank-picture answer",
                 "other": "something else"}
FAILURE_PHRASES = {
    "another_question": "the right answer to another question on the same picture, a value tied to the wrong thing",
    "blank_answer": "what it also says with a blank picture, an answer from the wording alone",
    "other": "neither another question's answer nor its blank-picture answer",
}
VERDICTS = {
    "unused": "the encoder holds it; the model does not use it",
    "used": "the encoder holds it and the model uses it",
    "absent": "a linear probe does not find it in the encoder's features",
}


# ---- formatting -------------------------------------------------------------------------------------------------

def _n(value: float) -> str:
    """A number as the page prints it: at most two decimals, no trailing zeros, never "-0"."""
    return f"{round(float(value), 2) + 0.0:g}"


def _loss(value: float) -> str:
    """A training loss: four significant figures."""
    return f"{float(value):.4g}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _pct(value: float) -> str:
    return f"{_n(value)}%"


def _interval(block: dict) -> str:
    lo, hi = block["gap_interval"]
    return f"[{_n(lo)}, {_n(hi)}]"


def _and(words: list[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _cell(text) -> str:
    """Free text (a question, an answer) safe inside a Markdown table cell."""
    return "" if text is None else str(text).replace("|", "\\|").replace("\n", " ")


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(head: list[str], rows: list[list]) -> list[str]:
    return [_row(head), _row(["---"] * len(head)), *(_row(r) for r in rows)]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _kind_label(kind: str) -> str:
    return "all questions" if kind == "all" else kind


# ---- rules ------------------------------------------------------------------------------------------------------

def _control_score(block: dict) -> float:
    return block["score"][block["best_control"]]


def _not_above_zero(block: dict) -> bool:
    """The gap's interval includes zero or lies below it: the picture makes no clear difference."""
    return block["gap_interval"][0] <= 0


def _small(block: dict, margin: float) -> bool:
    """The interval is above zero but the gap is under the margin: the picture adds little."""
    return not _not_above_zero(block) and block["gap"] < margin


def _named(blocks: dict) -> list[str]:
    return [k for k in kind_order(blocks) if k != NO_KIND]


def probe_verdict(entry: dict, margin: float = MARGIN) -> str | None:
    """"unused", "used" or "absent" for a probed kind (see VERDICTS), None for one not probed: the probe at least
    `margin` points above chance finds the detail; the model then uses it unless it scores `margin` points or more
    below the probe."""
    if not entry.get("closed") or not entry.get("questions"):
        return None
    if entry["probe"] < entry["chance"] + margin:
        return "absent"
    return "unused" if entry["model"] <= entry["probe"] - margin else "used"


def _sides(seen_heldout: dict | None) -> tuple[dict | None, dict | None]:
    """The overall blocks of the seen and held-out sides; None for a side with no test pictures."""
    if seen_heldout is None:
        return None, None
    return tuple((seen_heldout.get(side) or {}).get("overall") for side in ("seen", "heldout"))


def _heldout_falls(seen: dict | None, held: dict | None, margin: float) -> bool:
    return seen is not None and held is not None and held["score"]["right"] < seen["score"]["right"] - margin


def _falling_kinds(seen_heldout: dict, margin: float) -> list[str]:
    seen = (seen_heldout.get("seen") or {}).get("kinds", {})
    held = (seen_heldout.get("heldout") or {}).get("kinds", {})
    return [k for k in kind_order(set(seen) & set(held)) if _heldout_falls(seen[k], held[k], margin)]


# ---- the page's parts -------------------------------------------------------------------------------------------

def _intro(numbers: dict) -> list[str]:
    folder, settings, training = numbers["folder"], numbers["settings"], numbers["training"]
    train, test = folder["train"], folder["test"]
    name = Path(folder["folder"]).name or folder["folder"]
    held = (f", {test['heldout']} of its pictures marked held-out" if test["heldout"]
            else ", none of its pictures marked held-out")
    text = [f"This page audits the folder `{folder['folder']}`. Its training split has "
            f"{_count(train['pictures'], 'picture')}, {_count(train['captions'], 'caption')} and "
            f"{_count(train['questions'], 'question')}. Its test split has {_count(test['pictures'], 'picture')} and "
            f"{_count(test['questions'], 'question')}{held}."]
    stage1, stage2 = training.get("stage1"), training.get("stage2")
    phases = [f"for {phase['steps']} steps on the training {what} (final loss {_loss(phase['final_loss'])})"
              for phase, what in ((stage1, "captions"), (stage2, "questions")) if phase is not None]
    trained = f"trained {', then '.join(phases)}" if phases else "was not trained"
    text.append(f"The connector between the frozen vision encoder `{settings['vision']}` and the frozen language "
                f"model `{settings['language']}` {trained}. It ran with seed {settings['seed']}, in "
                f"{settings['precision']} on {settings['device']}.")
    if stage1 is None:
        text.append("Stage 1 did not run: the training pictures have no captions." if not folder["has_captions"]
                    else "Stage 1 did not run.")
    if stage2 is None:
        text.append("Stage 2 did not run: no training picture has questions, so the test questions meet a model "
                    "trained on captions alone.")
    if test["kinds"]:
        text.append("The test questions by kind: " + ", ".join(f"{k} ({n})" for k, n in test["kinds"].items())
                    + (f", and {test['unkinded']} with no kind." if test["unkinded"] else "."))
    else:
        text.append("No test question names a kind.")
    unlisted = train["unlisted"] + test["unlisted"]
    if unlisted:
        text.append(f"{_count(unlisted, 'picture')} in the folder {'is' if unlisted == 1 else 'are'} named by no row "
                    f"of a metadata.jsonl and {'was' if unlisted == 1 else 'were'} left out.")
    return [f"# Audit of {name}", "", " ".join(text)]


def _conditions_table(checks: dict) -> list[str]:
    head = ["kind", "questions", "right picture", "blank picture", "another picture", "no picture", "prior",
            "best control", "gap [interval]"]
    groups = [("all", checks["overall"]), *((k, checks["kinds"][k]) for k in kind_order(checks.get("kinds", {})))]
    rows = [[_kind_label(name), b["questions"], *(_pct(b["score"][c]) for c in ("right", "blank", "other", "none")),
             _pct(b["prior"]), CONTROL_PHRASES[b["best_control"]], f"{_n(b['gap'])} {_interval(b)}"]
            for name, b in groups]
    return _table(head, rows)


def _section_controls(numbers: dict, figure: str) -> list[str]:
    checks = numbers["checks"]
    overall = checks["overall"]
    lo, hi = overall["gap_interval"]
    zero_note = ", which includes zero" if lo <= 0 <= hi else (", wholly below zero" if hi < 0 else "")
    text = [f"Every test question was asked with its own picture, a blank picture, another test picture and no "
            f"picture. With its own picture the model answers {_pct(overall['score']['right'])} of the "
            f"{overall['questions']} questions exactly. The best control, {CONTROL_PHRASES[overall['best_control']]}, "
            f"gets {_pct(_control_score(overall))}: the picture adds {_n(overall['gap'])} points (interval {_n(lo)} "
            f"to {_n(hi)}{zero_note}, from resampling the test pictures). That gap, not the score, is what the "
            f"picture is worth."]
    kinds = checks.get("kinds", {})
    including = [k for k in kind_order(kinds) if kinds[k]["gap_interval"][0] <= 0 <= kinds[k]["gap_interval"][1]]
    below = [k for k in kind_order(kinds) if kinds[k]["gap_interval"][1] < 0]
    if including:
        text.append(f"For {_and(including)} the gap's interval includes zero: the model answers those questions "
                    f"about as well without looking.")
    if below:
        text.append(f"For {_and(below)} the interval lies below zero: the model does better without the picture.")
    if kinds and not including and not below:
        text.append("For every kind the gap's interval lies above zero: the picture makes a difference to each.")
    text.append(f"The prior is what a model that never looks would score by giving each test question the most "
                f"common training answer to the same wording, or else to the same kind. For "
                f"{overall['prior_from_wording']} of the {overall['questions']} questions the wording occurs in "
                f"training.")
    beside = ("seen against held-out combinations" if checks.get("seen_heldout") is not None
              else "what the wrong answers were")
    return ["## 1. Without the picture", "", *_conditions_table(checks), "", " ".join(text), "",
            f"![Scores with and without the picture per kind, and {beside}]({figure})"]


def _section_kinds(numbers: dict, margin: float) -> list[str]:
    checks, folder = numbers["checks"], numbers["folder"]
    kinds = checks.get("kinds", {})
    named = _named(kinds)
    text = []
    if len(named) >= 2 and len({kinds[k]["gap"] for k in named}) == 1:
        text.append(f"The gap is the same for every kind, {_n(kinds[named[0]]['gap'])} points.")
    elif len(named) >= 2:
        best = max(named, key=lambda k: (kinds[k]["gap"], k))
        worst = min(named, key=lambda k: (kinds[k]["gap"], k))
        text.append(f"The picture matters most for {best} questions (gap {_n(kinds[best]['gap'])} points, "
                    f"{_pct(kinds[best]['score']['right'])} with the right picture) and least for {worst} ones (gap "
                    f"{_n(kinds[worst]['gap'])} points, {_pct(kinds[worst]['score']['right'])}).")
        small = [k for k in named if _small(kinds[k], margin)]
        if small:
            text.append(f"For {_and(small)} the gap is under {_n(margin)} points: there the score says little about "
                        f"whether the model looks.")
    elif len(named) == 1:
        k = named[0]
        text.append(f"Every named test question is of one kind, {k} (gap {_n(kinds[k]['gap'])} points). Naming more "
                    f"kinds would show which questions the model answers by looking.")
    else:
        text.append('No test question names a kind, so there is nothing to break down. Add "kind" to each question '
                    "(color, count, position) to see which questions the model answers by looking.")
    untrained = [k for k in folder.get("untrained_kinds", []) if k in kinds]
    if untrained:
        scores = "; ".join(f"{k} {_pct(kinds[k]['score']['right'])}, gap {_n(kinds[k]['gap'])} points"
                           for k in untrained)
        text.append(f"The test asks {_and(untrained)} questions, which training never did ({scores}). Those "
                    f"scores say what carries over to a kind of question it never trained on.")
    elif named:
        text.append("Every kind the test asks was also asked in training.")
    return ["## 2. By kind", "", " ".join(text)]


def _section_heldout(numbers: dict, margin: float) -> list[str]:
    sh = numbers["checks"].get("seen_heldout")
    head = ["## 3. Held-out combinations", ""]
    if sh is None:
        return [*head, 'No test picture is marked held-out, so nothing here tells remembering from reading: add '
                       '"heldout": true to the rows of test/metadata.jsonl whose pictures show a combination training '
                       'never had, such as a product in a color it never came in.']
    seen, held = sh.get("seen"), sh.get("heldout")
    names = ["all", *kind_order(set((seen or {}).get("kinds", {})) | set((held or {}).get("kinds", {})))]

    def cells(part: dict | None, name: str) -> list:
        b = None if part is None else part["overall"] if name == "all" else part.get("kinds", {}).get(name)
        if b is None:
            return ["", "", "", ""]
        return [b["questions"], _pct(b["score"]["right"]), _pct(_control_score(b)), f"{_n(b['gap'])} {_interval(b)}"]

    table = _table(["kind", "seen: questions", "seen: right picture", "seen: best control", "seen: gap [interval]",
                    "held-out: questions", "held-out: right picture", "held-out: best control",
                    "held-out: gap [interval]"],
                   [[_kind_label(n), *cells(seen, n), *cells(held, n)] for n in names])
    if seen is None or held is None:
        there, missing = ("held-out", "seen") if seen is None else ("seen", "held-out")
        right = (held or seen)["overall"]["score"]["right"]
        return [*head, *table, "", f"Every test picture is {there}: {_pct(right)} with the right picture, with no "
                                   f"{missing} combinations beside it to compare."]
    s, h = seen["overall"]["score"]["right"], held["overall"]["score"]["right"]
    text = [f"On held-out combinations the model answers {_pct(h)} with the right picture, against {_pct(s)} on "
            f"combinations seen in training."]
    if _not_above_zero(seen["overall"]) or _small(seen["overall"], margin):
        text.append(f"On seen combinations the picture adds under {_n(margin)} points over the best control, so there "
                    "is little reading of the pictures for held-out ones to keep; this check says more once it does.")
    elif _heldout_falls(seen["overall"], held["overall"], margin):
        text.append(f"That is {_n(s - h)} points lower, more than {_n(margin)}: part of the seen score is "
                    f"remembering which answers go with which pictures, not reading them.")
    elif h < s:
        text.append(f"That is {_n(s - h)} points lower, within {_n(margin)}: it holds up on combinations it never "
                    f"trained on.")
    else:
        text.append(f"That is {_n(h - s)} points higher: it holds up on combinations it never trained on.")
    falling = _falling_kinds(sh, margin)
    if falling:
        text.append(f"By kind, held-out falls more than {_n(margin)} points below seen for {_and(falling)}.")
    return [*head, *table, "", " ".join(text)]


def _failures_table(failures: dict) -> list[str]:
    classes = list(FAILURE_HEADS)

    def row(name: str, part: dict) -> list:
        wrong = part["wrong"]
        return [_kind_label(name), wrong,
                *(f"{part['classes'].get(c, 0)} ({_pct(100 * part['classes'].get(c, 0) / wrong)})" if wrong
                  else part["classes"].get(c, 0) for c in classes)]

    rows = [row("all", failures), *(row(k, failures["kinds"][k]) for k in kind_order(failures.get("kinds", {})))]
    return _table(["kind", "wrong", *(FAILURE_HEADS[c] for c in classes)], rows)


def _commonest(classes: dict) -> list[str]:
    top = max(classes.values(), default=0)
    return [c for c in FAILURE_HEADS if top and classes.get(c, 0) == top]


def _probe_part(numbers: dict, margin: float) -> list[str]:
    probe = numbers.get("probe") or {}
    entries = probe.get("kinds", {})
    if not entries:
        return []
    order = kind_order(entries)
    probed = [k for k in order if probe_verdict(entries[k], margin) is not None]
    text = ["A wrong answer can come from the encoder, which may not hold the detail, or from the connector and the "
            "language model, which may not use it. A linear probe on the encoder's features tells the first from the "
            "others."]
    if reads := probe.get("input"):
        text.append(f"The probe reads {_sentence(reads)}" if reads[:1].islower() else _sentence(reads))
    text.append(f"The verdicts compare the probe with chance and with the model, at a margin of {_n(margin)} points.")
    out = ["", " ".join(text)]
    if probed:
        out += ["", *_table(["kind", "questions", "wordings", "answers to tell apart", "probe", "chance", "model",
                             "verdict"],
                            [[k, e["questions"], e["wordings"], e["classes"], _pct(e["probe"]), _pct(e["chance"]),
                              _pct(e["model"]), VERDICTS[probe_verdict(e, margin)]]
                             for k in probed for e in [entries[k]]])]
    skipped = [k for k in order if k not in probed]
    if skipped:
        out += ["", "Not probed: " + "; ".join(f"{k}, {entries[k].get('why', 'no reason given').rstrip('.')}"
                                              for k in skipped) + "."]
    return out


def _section_failures(numbers: dict, margin: float) -> list[str]:
    checks = numbers["checks"]
    failures = checks["failures"]
    out = ["## 4. The failures read", ""]
    wrong = failures["wrong"]
    if not wrong:
        out.append("With its own picture the model answered every test question right: there are no wrong answers "
                   "to read.")
    else:
        top = _commonest(failures["classes"])
        out += [f"With its own picture the model got {wrong} of the {checks['overall']['questions']} test questions "
                f"wrong. A wrong answer is another question's answer when it is the right answer to another question "
                f"on the same picture, and its blank-picture answer when the model says the same with a blank "
                f"picture.", "", *_failures_table(failures)]
        if len(top) == 1:
            out += ["", f"The commonest wrong answer was {FAILURE_HEADS[top[0]]} ({failures['classes'][top[0]]} of "
                        f"{wrong})."]
        elif top:
            out += ["", f"The commonest wrong answers were {_and([FAILURE_HEADS[c] for c in top])} "
                        f"({failures['classes'][top[0]]} of {wrong} each)."]
        examples = failures.get("examples", [])[:EXAMPLES]
        if examples:
            out += ["", f"{len(examples)} of the wrong answers:", "",
                    *_table(["picture", "kind", "question", "right answer", "said", "with a blank picture",
                             "wrong answer was"],
                            [[_cell(e["file_name"]), _cell(e.get("kind") or NO_KIND), _cell(e["question"]),
                              _cell(e["answer"]), _cell(e["said"]), _cell(e.get("blank")),
                              FAILURE_HEADS.get(e["class"], _cell(e["class"]))] for e in examples])]
    return out + _probe_part(numbers, margin)


def _binding(reference: dict | None) -> dict | None:
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
    binding = _binding(numbers.get("study_reference"))
    if binding:
        text.append(f"In the shapes study, binding questions on held-out pairs scored "
                    f"{_pct(binding['caption_qa']['heldout'])} after captions then questions and "
                    f"{_pct(binding['qa']['heldout'])} from questions alone (medians of its replicates). On seen "
                    f"pairs the two scored {_pct(binding['caption_qa']['seen'])} and {_pct(binding['qa']['seen'])}.")
    else:
        text.append("In the shapes study, learning to describe pictures first is what kept a color tied to its shape "
                    "on pairs never trained on, while on familiar pairs the recipe without captions looked as good.")
    if not numbers["folder"].get("has_captions"):
        text.append('Captions on the training pictures ("text" in train/metadata.jsonl) would let stage 1 run.')
    return " ".join(text)


def _agreement(numbers: dict) -> list[str]:
    agreement = numbers.get("agreement")
    if not agreement or not agreement.get("rows"):
        return []
    rows = agreement["rows"]
    within = sum(bool(r["within"]) for r in rows)
    return ["## Against the shapes study", "",
            f"These are the shapes study's own pictures, exported as a folder. The audit's number lies within the "
            f"range of the study's replicates on {within} of the {len(rows)} rows below (scores in percent, gaps in "
            f"points).", "",
            *_table(["what", "audit", "study lowest", "study median", "study highest", "within the range"],
                    [[_cell(r["what"]), _n(r["audit"]), _n(r["study_min"]), _n(r["study_median"]),
                      _n(r["study_max"]), "yes" if r["within"] else "no"] for r in rows])]


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
    zero = [k for k in order if _not_above_zero(kinds[k])]
    small = [k for k in order if _small(kinds[k], margin)]
    sh = checks.get("seen_heldout")
    seen, held = _sides(sh)
    compared = seen is not None and held is not None
    falls = _heldout_falls(seen, held, margin)
    falling = _falling_kinds(sh, margin) if sh is not None else []

    reasons = []
    if _not_above_zero(overall):
        reasons.append("over all questions the picture makes no clear difference (the gap's interval is not above "
                       "zero)")
    if zero:
        reasons.append(f"for {_and(zero)} the gap's interval is not above zero, so it answers "
                       f"{'that kind' if len(zero) == 1 else 'those kinds'} as well without looking")
    if small:
        reasons.append(f"for {_and(small)} the picture adds under {_n(margin)} points")
    if falls:
        s, h = seen["score"]["right"], held["score"]["right"]
        reasons.append(f"held-out combinations score {_pct(h)}, {_n(s - h)} points below seen ones ({_pct(s)})")
    elif falling:
        reasons.append(f"held-out {_and(falling)} questions score more than {_n(margin)} points below seen ones")
    if reasons:
        text = [f"Not yet: {'; '.join(reasons)}."]
    else:
        every = "for every kind" if kinds else "over all questions"
        text = [f"On these checks, yes: {every} the picture adds at least {_n(margin)} points over the best control, "
                f"with an interval above zero" + (f", and held-out combinations score no more than {_n(margin)} "
                                                  f"points below seen ones." if compared else ".")]
    lo, hi = overall["gap_interval"]
    text.append(f"With its own picture the model answers {_pct(overall['score']['right'])} of the test questions; "
                f"the best control, {CONTROL_PHRASES[overall['best_control']]}, gets {_pct(_control_score(overall))}, "
                f"a gap of {_n(overall['gap'])} points (interval {_n(lo)} to {_n(hi)}).")
    weak = [k for k in order if k in zero or k in small]
    matters = [k for k in order if k not in weak]
    if matters and weak:
        text.append(f"The picture matters for {_and(matters)}, not for {_and(weak)}.")
    elif matters and len(matters) > 1:
        text.append(f"The picture matters for each kind: {_and(matters)}.")
    elif weak and len(weak) > 1:
        text.append(f"The picture matters for none of the kinds: {_and(weak)}.")
    if compared and not falls:
        text.append(f"Held-out combinations score {_pct(held['score']['right'])} against "
                    f"{_pct(seen['score']['right'])} seen.")
    elif not compared and held is not None:
        text.append("Every test picture is marked held-out, so there are no seen combinations to compare with.")
    elif not compared:
        text.append("No test picture was marked held-out, so nothing here says how it does on combinations it never "
                    "trained on.")
    failures = checks["failures"]
    top = _commonest(failures["classes"])
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
        text.append(f"For {_and(unused)} a linear probe finds the answer in the encoder's features but the model does "
                    f"not use it: the connector and the language model are where to look.")
    beyond = [k for k in absent if entries[k]["model"] >= entries[k]["probe"] + margin]
    missing = [k for k in absent if k not in beyond]
    if missing:
        text.append(f"For {_and(missing)} a linear probe does not find it in the encoder's features and the model "
                    f"scores less than {_n(margin)} points above the probe, so more question data is unlikely to "
                    f"help.")
    if beyond:
        text.append(f"For {_and(beyond)} the model does better than a linear probe on the encoder's features, so the "
                    f"probe is no guide there.")
    return " ".join(text)


def page_text(numbers: dict, figure: str = "audit.png", margin: float | None = None) -> str:
    """The page's Markdown from the audit's JSON, showing the figure (summary.figure, drawn beside audit.json) at
    `figure`, a link relative to the page. The margin: the argument, else settings.margin of the JSON, else MARGIN.
    The same numbers give the same text."""
    if margin is None:
        margin = numbers.get("settings", {}).get("margin", MARGIN)
    lines = [*_intro(numbers), "", *_section_controls(numbers, figure), "", *_section_kinds(numbers, margin), "",
             *_section_heldout(numbers, margin), "", *_section_failures(numbers, margin), ""]
    if (paragraph := no_captions_paragraph(numbers)) is not None:
        lines += ["## Without captions", "", paragraph, ""]
    if agreement := _agreement(numbers):
        lines += [*agreement, ""]
    lines += ["## Is it ready?", "", closing_paragraph(numbers, margin)]
    return "\n".join(lines) + "\n"


def write_page(numbers: dict, path: Path, figure: str = "audit.png", margin: float | None = None) -> Path:
    """page_text written to `path`; returns `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text(numbers, figure, margin))
    return path
