"""The audit page's fourth check: the wrong answers read and classed, and where a linear probe on the encoder's
features finds what the model missed."""

from __future__ import annotations

from frozenbridge.audit.report.before import still_learning
from frozenbridge.audit.report.rules import VERDICTS, probe_verdict
from frozenbridge.audit.report.words import as_sentence, joined, kind_label, md_cell, md_table, num, pct
from frozenbridge.audit.summary.figure import NO_KIND, kind_order


EXAMPLES = 8
FAILURE_HEADS = {"another_question": "another question's answer", "blank_answer": "its blank-picture answer",
                 "other": "something else"}


def failures_table(failures: dict) -> list[str]:
    classes = list(FAILURE_HEADS)

    def row(name: str, part: dict) -> list:
        wrong = part["wrong"]
        return [kind_label(name), wrong,
                *(f"{part['classes'].get(c, 0)} ({pct(100 * part['classes'].get(c, 0) / wrong)})" if wrong
                  else part["classes"].get(c, 0) for c in classes)]

    rows = [row("all", failures), *(row(k, failures["kinds"][k]) for k in kind_order(failures.get("kinds", {})))]
    return md_table(["kind", "wrong", *(FAILURE_HEADS[c] for c in classes)], rows)


def commonest(classes: dict) -> list[str]:
    top = max(classes.values(), default=0)
    return [c for c in FAILURE_HEADS if top and classes.get(c, 0) == top]


def probe_part(numbers: dict, margin: float) -> list[str]:
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
        text.append(f"The probe reads {as_sentence(reads)}" if reads[:1].islower() else as_sentence(reads))
    text.append(f"The verdicts compare the probe with chance and with the model, at a margin of {num(margin)} points.")
    out = ["", " ".join(text)]
    learning = bool(still_learning(numbers))

    def verdict(e: dict) -> str:
        v = probe_verdict(e, margin)
        return f"{VERDICTS[v]} yet (still learning)" if v == "unused" and learning else VERDICTS[v]
    if probed:
        out += ["", *md_table(["kind", "questions", "wordings", "answers to tell apart", "probe", "chance", "model",
                             "verdict"],
                            [[k, e["questions"], e["wordings"], e["classes"], pct(e["probe"]), pct(e["chance"]),
                              pct(e["model"]), verdict(e)]
                             for k in probed for e in [entries[k]]])]
    skipped = [k for k in order if k not in probed]
    if skipped:
        out += ["", "Not probed: " + "; ".join(f"{k}, {entries[k].get('why', 'no reason given').rstrip('.')}"
                                              for k in skipped) + "."]
    return out


def section_failures(numbers: dict, margin: float) -> list[str]:
    checks = numbers["checks"]
    failures = checks["failures"]
    out = ["## 4. The failures read", ""]
    wrong = failures["wrong"]
    if not wrong:
        out.append("With its own picture the model answered every test question right: there are no wrong answers "
                   "to read.")
    else:
        top = commonest(failures["classes"])
        overall = checks["overall"]
        reps = overall.get("replicates", 1)
        got = (f"With its own picture the model got {wrong} of the {overall['questions']} test questions wrong."
               if reps == 1 else f"With its own picture the {reps} replicates gave {wrong} wrong answers of "
                                 f"{overall['answers']}, {overall['questions']} test questions each.")
        out += [f"{got} A wrong answer is another question's answer when it is the right answer to another question "
                f"on the same picture, and its blank-picture answer when the model says the same with a blank "
                f"picture.", "", *failures_table(failures)]
        if len(top) == 1:
            out += ["", f"The commonest wrong answer was {FAILURE_HEADS[top[0]]} ({failures['classes'][top[0]]} of "
                        f"{wrong})."]
        elif top:
            out += ["", f"The commonest wrong answers were {joined([FAILURE_HEADS[c] for c in top])} "
                        f"({failures['classes'][top[0]]} of {wrong} each)."]
        examples = failures.get("examples", [])[:EXAMPLES]
        if examples:
            out += ["", f"{len(examples)} of the wrong answers:", "",
                    *md_table(["picture", "kind", "question", "right answer", "said", "with a blank picture",
                             "wrong answer was"],
                            [[md_cell(e["file_name"]), md_cell(e.get("kind") or NO_KIND), md_cell(e["question"]),
                              md_cell(e["answer"]), md_cell(e["said"]), md_cell(e.get("blank")),
                              FAILURE_HEADS.get(e["class"], md_cell(e["class"]))] for e in examples])]
    return out + probe_part(numbers, margin)
