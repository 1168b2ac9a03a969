"""The audit page's opening and its first three checks: the picture against its controls, the score by kind, and
held-out combinations against seen ones."""

from __future__ import annotations

from pathlib import Path
from frozenbridge.audit.report.rules import (adds_little, control_score, falling_kinds, heldout_falls, named_kinds,
                                             not_above_zero)
from frozenbridge.audit.report.words import counted, interval_text, joined, kind_label, loss_text, md_table, num, pct
from frozenbridge.audit.summary.figure import kind_order


CONTROL_PHRASES = {"blank": "a blank picture", "wrong": "another test picture", "none": "no picture at all"}


def intro(numbers: dict) -> list[str]:
    folder, settings, training = numbers["folder"], numbers["settings"], numbers["training"]
    train, test = folder["train"], folder["test"]
    name = Path(folder["folder"]).name or folder["folder"]
    held = (f", {test['heldout']} of its pictures marked held-out" if test["heldout"]
            else ", none of its pictures marked held-out")
    text = [f"This page audits the folder `{folder['folder']}`. Its training split has "
            f"{counted(train['pictures'], 'picture')}, {counted(train['captions'], 'caption')} and "
            f"{counted(train['questions'], 'question')}. Its test split has {counted(test['pictures'], 'picture')} and "
            f"{counted(test['questions'], 'question')}{held}."]
    stage1, stage2 = training.get("stage1"), training.get("stage2")
    phases = [f"{phase['steps']} steps on the training {what} ({final_losses(phase['final_loss'])})"
              for phase, what in ((stage1, "captions"), (stage2, "questions")) if phase is not None]
    model = (f"The connector between the frozen vision encoder `{settings['vision']}` and the frozen language model "
             f"`{settings['language']}`")
    trained = (f"{model} was not trained." if not phases else f"{model} trained for {phases[0]}." if len(phases) == 1
               else f"{model} trained for {phases[0]}. Then it trained for {phases[1]}.")
    reps = settings.get("replicates") or [0]
    where = f"in {settings['precision']} on {settings['device']}"
    runs = (f"It ran with seed {settings['seed']}, {where}." if len(reps) == 1 else
            f"It trained {len(reps)} replicates ({', '.join(str(r) for r in reps)}) {where}, each from the shapes "
            f"study's seed streams of that replicate (seed {settings['seed']}). Every score below counts every "
            f"replicate's answers.")
    text.append(f"{trained} {runs}")
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
        text.append(f"{counted(unlisted, 'picture')} in the folder {'is' if unlisted == 1 else 'are'} named by no row "
                    f"of a metadata.jsonl and {'was' if unlisted == 1 else 'were'} left out.")
    return [f"# Audit of {name}", "", " ".join(text)]


def over_replicates(block: dict) -> str:
    """", over its 5 replicates' 3500 answers" where the block pools several replicates; nothing for one."""
    reps = block.get("replicates", 1)
    return f", over its {reps} replicates' {block['answers']} answers" if reps > 1 else ""


def final_losses(losses: dict) -> str:
    """'final loss 0.1933', or 'final loss 0.19 to 0.25 over the replicates'."""
    values = list(losses.values())
    if len(values) == 1:
        return f"final loss {loss_text(values[0])}"
    return f"final loss {loss_text(min(values))} to {loss_text(max(values))} over the replicates"


def conditions_table(checks: dict) -> list[str]:
    head = ["kind", "questions", "right picture", "blank picture", "another picture", "no picture", "prior",
            "best control", "gap [interval]"]
    groups = [("all", checks["overall"]), *((k, checks["kinds"][k]) for k in kind_order(checks.get("kinds", {})))]
    rows = [[kind_label(name), b["questions"], *(pct(b["score"][c]) for c in ("right", "blank", "wrong", "none")),
             pct(b["prior"]), CONTROL_PHRASES[b["best_control"]], f"{num(b['gap'])} {interval_text(b)}"]
            for name, b in groups]
    return md_table(head, rows)


def section_controls(numbers: dict, figure: str) -> list[str]:
    checks = numbers["checks"]
    overall = checks["overall"]
    lo, hi = overall["gap_interval"]
    zero_note = ", which includes zero" if lo <= 0 <= hi else (", wholly below zero" if hi < 0 else "")
    text = [f"Every test question was asked with its own picture, a blank picture, another test picture and no "
            f"picture. With its own picture the model answers {pct(overall['score']['right'])} of the "
            f"{overall['questions']} questions exactly{over_replicates(overall)}. The best control, "
            f"{CONTROL_PHRASES[overall['best_control']]}, gets {pct(control_score(overall))}: the picture adds {num(overall['gap'])} points (interval {num(lo)} "
            f"to {num(hi)}{zero_note}, from resampling the test pictures). That gap, not the score, is what the "
            f"picture is worth."]
    kinds = checks.get("kinds", {})
    including = [k for k in kind_order(kinds) if kinds[k]["gap_interval"][0] <= 0 <= kinds[k]["gap_interval"][1]]
    below = [k for k in kind_order(kinds) if kinds[k]["gap_interval"][1] < 0]
    if including:
        text.append(f"For {joined(including)} the gap's interval includes zero: the model answers those questions "
                    f"about as well without looking.")
    if below:
        text.append(f"For {joined(below)} the interval lies below zero: the model does better without the picture.")
    if kinds and not including and not below:
        text.append("For every kind the gap's interval lies above zero: the picture makes a difference to each.")
    text.append(f"The prior is what a model that never looks would score by giving each test question the most "
                f"common training answer to the same wording, or else to the same kind. For "
                f"{overall['prior_from_wording']} of the {overall['questions']} questions the wording occurs in "
                f"training.")
    beside = ("seen against held-out combinations" if checks.get("seen_heldout") is not None
              else "what the wrong answers were")
    return ["## 1. Without the picture", "", *conditions_table(checks), "", " ".join(text), "",
            f"![Scores with and without the picture per kind, and {beside}]({figure})"]


def section_kinds(numbers: dict, margin: float) -> list[str]:
    checks, folder = numbers["checks"], numbers["folder"]
    kinds = checks.get("kinds", {})
    named = named_kinds(kinds)
    text = []
    if len(named) >= 2 and len({kinds[k]["gap"] for k in named}) == 1:
        text.append(f"The gap is the same for every kind, {num(kinds[named[0]]['gap'])} points.")
    elif len(named) >= 2:
        best = max(named, key=lambda k: (kinds[k]["gap"], k))
        worst = min(named, key=lambda k: (kinds[k]["gap"], k))
        text.append(f"The picture matters most for {best} questions (gap {num(kinds[best]['gap'])} points, "
                    f"{pct(kinds[best]['score']['right'])} with the right picture) and least for {worst} ones (gap "
                    f"{num(kinds[worst]['gap'])} points, {pct(kinds[worst]['score']['right'])}).")
        small = [k for k in named if adds_little(kinds[k], margin)]
        if small:
            text.append(f"For {joined(small)} the gap is under {num(margin)} points: there the score says little about "
                        f"whether the model looks.")
    elif len(named) == 1:
        k = named[0]
        text.append(f"Every named test question is of one kind, {k} (gap {num(kinds[k]['gap'])} points). Naming more "
                    f"kinds would show which questions the model answers by looking.")
    else:
        text.append('No test question names a kind, so there is nothing to break down. Add "kind" to each question '
                    "(color, count, position) to see which questions the model answers by looking.")
    untrained = [k for k in folder.get("untrained_kinds", []) if k in kinds]
    if untrained:
        scores = "; ".join(f"{k} {pct(kinds[k]['score']['right'])}, gap {num(kinds[k]['gap'])} points"
                           for k in untrained)
        text.append(f"The test asks {joined(untrained)} questions, which training never did ({scores}). Those "
                    f"scores say what carries over to a kind of question it never trained on.")
    elif named:
        text.append("Every kind the test asks was also asked in training.")
    return ["## 2. By kind", "", " ".join(text)]


def section_heldout(numbers: dict, margin: float) -> list[str]:
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
        return [b["questions"], pct(b["score"]["right"]), pct(control_score(b)), f"{num(b['gap'])} {interval_text(b)}"]

    table = md_table(["kind", "seen: questions", "seen: right picture", "seen: best control", "seen: gap [interval]",
                    "held-out: questions", "held-out: right picture", "held-out: best control",
                    "held-out: gap [interval]"],
                   [[kind_label(n), *cells(seen, n), *cells(held, n)] for n in names])
    if seen is None or held is None:
        there, missing = ("held-out", "seen") if seen is None else ("seen", "held-out")
        right = (held or seen)["overall"]["score"]["right"]
        return [*head, *table, "", f"Every test picture is {there}: {pct(right)} with the right picture, with no "
                                   f"{missing} combinations beside it to compare."]
    s, h = seen["overall"]["score"]["right"], held["overall"]["score"]["right"]
    text = [f"On held-out combinations the model answers {pct(h)} with the right picture, against {pct(s)} on "
            f"combinations seen in training."]
    if not_above_zero(seen["overall"]) or adds_little(seen["overall"], margin):
        text.append(f"On seen combinations the picture adds under {num(margin)} points over the best control, so there "
                    "is little reading of the pictures for held-out ones to keep; this check says more once it does.")
    elif heldout_falls(seen["overall"], held["overall"], margin):
        text.append(f"That is {num(s - h)} points lower, more than {num(margin)}: part of the seen score is "
                    f"remembering which answers go with which pictures, not reading them.")
    elif h < s:
        text.append(f"That is {num(s - h)} points lower, within {num(margin)}: it holds up on combinations it never "
                    f"trained on.")
    else:
        text.append(f"That is {num(h - s)} points higher: it holds up on combinations it never trained on.")
    falling = falling_kinds(sh, margin)
    if falling:
        text.append(f"By kind, held-out falls more than {num(margin)} points below seen for {joined(falling)}.")
    return [*head, *table, "", " ".join(text)]
