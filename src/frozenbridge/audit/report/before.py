"""What the page says before any gap: whether the runs were still learning when they stopped (read from their own
loss curves, audit.evaluation.curve), and whether test pictures repeat training ones (audit.evaluation.repeats).
Either can make a gap mean something else: a run still learning may read the picture a few hundred steps later, and
a repeated picture may be answered from memory."""

from __future__ import annotations

from frozenbridge.audit.report.words import counted, joined, num

PHASE_WORDS = {"stage1": "caption", "stage2": "question"}
SHOWN = 3  # repeated pictures named on the page


def still_learning(numbers: dict) -> dict[str, list[str]]:
    """{phase: the replicates whose loss was still falling at its last step}, phases in training order."""
    out: dict[str, list[str]] = {}
    curves_by_rep = (numbers.get("training") or {}).get("curves") or {}  # none in an audit that trained nothing
    for rep, curves in sorted(curves_by_rep.items(), key=lambda kv: int(kv[0])):
        for phase, curve in curves.items():
            if curve is not None and curve["still_falling"]:
                out.setdefault(phase, []).append(rep)
    return {p: out[p] for p in PHASE_WORDS if p in out}


def learning_sentences(numbers: dict) -> list[str]:
    """A sentence a phase still learning: how much its loss fell over its last steps, and the setting to raise."""
    curves = (numbers.get("training") or {}).get("curves") or {}
    reps = len(curves)
    out = []
    for phase, which in still_learning(numbers).items():
        curve = curves[which[0]][phase]
        runs = ("The run was" if reps == 1 else f"Replicate {which[0]} was" if len(which) == 1 else
                f"{len(which)} of the {reps} replicates were")
        where = "its" if reps == 1 else f"replicate {which[0]}'s"
        out.append(f"{runs} still learning at the last {PHASE_WORDS[phase]} step: the mean loss of {where} last "
                   f"{curve['window']} steps was {num(100 * curve['fall'])}% below the {curve['window']} before. "
                   f"Raise `{curve['setting']}` (now {curve['steps']}) before reading a small gap as a picture the "
                   f"model does not read.")
    return out


def repeat_sentences(numbers: dict) -> list[str]:
    found = numbers.get("repeats") or []
    if not found:
        return []
    same = {how: [r for r in found if r["same"] == how] for how in ("file", "features")}
    parts = [f"{counted(len(rs), 'test picture')} with the same {'bytes' if how == 'file' else 'features'} as a "
             f"training picture" for how, rs in same.items() if rs]
    named = "; ".join(f"{r['test']} repeats {r['train']}" for r in found[:SHOWN])
    more = f", and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return [f"The test repeats training: {joined(parts)} ({named}{more}). Answers about them may be remembered, not "
            f"read: take them out of test/ before trusting a score."]


def before_the_gaps(numbers: dict) -> list[str]:
    """The section's lines, or none when every run had stopped learning and no test picture repeats a training one."""
    text = learning_sentences(numbers) + repeat_sentences(numbers)
    return ["## Read this first", "", " ".join(text)] if text else []
