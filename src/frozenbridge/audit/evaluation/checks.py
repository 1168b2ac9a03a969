"""The audit's numbers, read from the model's answers to every test question under its picture and three controls.

Why not one score (the reference's "is 90% ready?", issue 52): a score means little until it is set beside what the
model scores without looking. So every test question is asked four times, with its own picture, a blank one, the
wrong picture (another test picture) and none, and the number that matters is the gap between the right picture and
the best of the three controls (core.controls: the shapes study's conditions, best control and gap), with a 95%
bootstrap interval. The interval resamples pictures, not questions: the questions about one picture share it, so they
are not independent draws, and treating them as such would make the interval too narrow. Trained at several
replicates, every replicate's answers count (a score is over all of them), the bootstrap draws pictures with all their
answers, and `by_replicate` keeps each replicate's own scores and gaps beside.

Beside the gap, the prior: what a model that never looks scores by giving each test question the most common training
answer for its wording (else for its kind), the floor a picture has to lift the score above. Every number is broken
down by kind (an average hides the kind that fails), and seen against held-out combinations when the folder marks
held-out pictures. The wrong right-picture answers are sorted by what they look like, since the cure differs: the
right answer to another question about the same picture (the detail was seen but tied to the wrong thing), the answer
the model also gives to a blank picture (the picture was not read), or something else.

Pure numbers from the answers: numpy only, no model, the same output for the same seed.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import numpy as np

from frozenbridge.core.controls import (CONDITIONS, CONTROLS, best_control, gap, is_right,  # noqa: F401 (CONTROLS)
                                        normalize, percent)

CONDITION_LABELS = {"right": "right picture", "blank": "blank picture", "wrong": "another picture",
                    "none": "no picture"}
UNKINDED = "(no kind)"  # the group of the questions the folder gives no kind
FAILURE_CLASSES = ("another_question", "blank_answer", "other")  # in order of precedence
FAILURE_LABELS = {"another_question": "the right answer to another question about the same picture",
                  "blank_answer": "the answer it also gives with a blank picture",
                  "other": "something else"}
EXAMPLES = 24  # wrong answers kept to read, the first in record order
RECORD_KEYS = ("replicate", "picture", "file_name", "question", "kind", "answer", "heldout", "said")


class Prior(NamedTuple):
    answer: str | None  # normalized; None when neither the wording nor the kind occurs in training (counted wrong)
    from_wording: bool  # the wording occurs in training; otherwise the answer is its kind's


def hit(said: str, answer: str) -> bool:
    """The audit's scoring rule (core.controls.is_right): equal after trimming and lower-casing."""
    return is_right(said, answer)


def kind_of(item: dict) -> str:
    return UNKINDED if item.get("kind") is None else item["kind"]


def most_frequent(answers: list[str]) -> str | None:
    """The most frequent answer, ties to the alphabetically first; None for no answers."""
    counts = Counter(answers)
    return min(counts, key=lambda a: (-counts[a], a)) if counts else None


def prior_answers(records: list[dict], train_questions: list[dict]) -> list[Prior]:
    """Per record, the answer a model needs no picture for: the most frequent training answer to the same wording
    (compared normalized), else to the same kind (questions without a kind form one group), else none."""
    by_wording: dict[str, list[str]] = {}
    by_kind: dict[str, list[str]] = {}
    for q in train_questions:
        answer = normalize(q["answer"])
        by_wording.setdefault(normalize(q["question"]), []).append(answer)
        by_kind.setdefault(kind_of(q), []).append(answer)
    wording_prior = {w: most_frequent(a) for w, a in by_wording.items()}
    kind_prior = {k: most_frequent(a) for k, a in by_kind.items()}
    out = []
    for r in records:
        wording = normalize(r["question"])
        if wording in wording_prior:
            out.append(Prior(wording_prior[wording], True))
        else:
            out.append(Prior(kind_prior.get(kind_of(r)), False))
    return out


def gap_interval(per_picture: np.ndarray, asked: np.ndarray, samples: int, rng_seed: int) -> list[float]:
    """The 2.5 and 97.5 percentiles of the gap over `samples` resamples of the pictures with replacement, each drawn
    picture bringing all its questions. per_picture: (pictures, conditions) hits; asked: questions per picture."""
    rng = np.random.default_rng(rng_seed)
    gaps = np.empty(samples)
    for s in range(samples):
        drawn = rng.integers(0, len(asked), len(asked))
        hits = per_picture[drawn].sum(0)
        gaps[s] = 100.0 * (hits[0] - hits[1:].max()) / asked[drawn].sum()
    lo, hi = np.percentile(gaps, [2.5, 97.5])
    return [round(float(lo), 2), round(float(hi), 2)]


def block(records: list[dict], prior_answers: list[Prior], samples: int, rng_seed: int) -> dict:
    """The numbers of one set of records (prior_answers aligned with them): scores under each condition, the prior,
    the best control, the gap and its bootstrap interval over pictures."""
    if not records:
        raise ValueError("a block needs at least one record")
    hits = np.array([[hit(r["said"][c], r["answer"]) for c in CONDITIONS] for r in records], dtype=np.int64)
    pictures, where = np.unique([r["picture"] for r in records], return_inverse=True)
    per_picture = np.zeros((len(pictures), len(CONDITIONS)), dtype=np.int64)
    np.add.at(per_picture, where, hits)
    asked = np.bincount(where, minlength=len(pictures))
    n = len(records)
    score = {c: percent(int(hits[:, i].sum()), n) for i, c in enumerate(CONDITIONS)}
    replicates = len({r["replicate"] for r in records})
    prior_hits = sum(p.answer is not None and p.answer == normalize(r["answer"])
                     for r, p in zip(records, prior_answers))
    interval = gap_interval(per_picture, asked, samples, rng_seed) if len(pictures) > 1 else [gap(score)] * 2
    return {"questions": n // replicates, "answers": n, "replicates": replicates, "pictures": len(pictures),
            "score": score, "prior": percent(prior_hits, n),
            "prior_from_wording": sum(p.from_wording for p in prior_answers) // replicates,
            "best_control": best_control(score), "gap": gap(score), "gap_interval": interval}


def breakdown(records: list[dict], priors: list[Prior], samples: int, rng_seed: int) -> dict:
    """{"overall": the block of all records, "kinds": {kind: its block}, kinds sorted}."""
    kinds: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        kinds.setdefault(kind_of(r), []).append(i)
    return {"overall": block(records, priors, samples, rng_seed),
            "kinds": {k: block([records[i] for i in kinds[k]], [priors[i] for i in kinds[k]], samples, rng_seed)
                      for k in sorted(kinds)}}


def failure_class(record: dict, others: set[str]) -> str:
    """The class of a wrong right-picture answer; others: the normalized truths of the other questions about the
    same picture that differ from this one's."""
    said = normalize(record["said"]["right"])
    if said in others:
        return "another_question"
    if said == normalize(record["said"]["blank"]):
        return "blank_answer"
    return "other"


def tally() -> dict:
    return {"wrong": 0, "classes": dict.fromkeys(FAILURE_CLASSES, 0)}


def failures(records: list[dict]) -> dict:
    """Every wrong right-picture answer classed (FAILURE_CLASSES), counted overall and per kind, the first kept."""
    truths: dict[int, list[tuple[str, str]]] = {}  # picture -> (wording, truth) of each of its questions
    for r in records:
        truths.setdefault(r["picture"], []).append((normalize(r["question"]), normalize(r["answer"])))
    counts = tally()
    kinds = {k: tally() for k in sorted({kind_of(r) for r in records})}
    examples = []
    for r in records:
        if hit(r["said"]["right"], r["answer"]):
            continue
        wording, truth = normalize(r["question"]), normalize(r["answer"])
        others = {a for w, a in truths[r["picture"]] if w != wording and a != truth}
        cls = failure_class(r, others)
        for count in (counts, kinds[kind_of(r)]):
            count["wrong"] += 1
            count["classes"][cls] += 1
        if len(examples) < EXAMPLES:
            examples.append({"file_name": r["file_name"], "question": r["question"], "kind": r["kind"],
                             "answer": r["answer"], "said": r["said"]["right"], "blank": r["said"]["blank"],
                             "class": cls})
    return {**counts, "kinds": kinds, "examples": examples}


def cell(records: list[dict]) -> dict:
    """One replicate's scores under each condition and its gap over the best control, for a set of its records."""
    score = {c: percent(sum(hit(r["said"][c], r["answer"]) for r in records), len(records)) for c in CONDITIONS}
    return {"questions": len(records), "score": score, "best_control": best_control(score), "gap": gap(score)}


def replicate_cells(records: list[dict]) -> dict:
    """{replicate: {side: {kind: cell}}}, side "all" and, where some records are held out, "seen" and "heldout";
    kind "all" and each kind: every replicate's own numbers, for its range and for pairing with the study's."""
    out: dict = {}
    for rep in sorted({r["replicate"] for r in records}):
        mine = [r for r in records if r["replicate"] == rep]
        sides = {"all": mine}
        if any(r["heldout"] for r in mine):
            sides.update(seen=[r for r in mine if not r["heldout"]], heldout=[r for r in mine if r["heldout"]])
        out[str(rep)] = {side: {kind: cell(group) for kind, group in
                                [("all", rs), *sorted(((k, [r for r in rs if kind_of(r) == k])
                                                       for k in {kind_of(r) for r in rs}), key=lambda kv: kv[0])]}
                         for side, rs in sides.items() if rs}
    return out


def check_records(records: list[dict]) -> None:
    if not records:
        raise ValueError("no test records: the audit's numbers need the model's answers to at least one test question")
    for i, r in enumerate(records):
        missing = [k for k in RECORD_KEYS if k not in r] or [f"said[{c!r}]" for c in CONDITIONS if c not in r["said"]]
        if missing:
            raise ValueError(f"test record {i} has no {', '.join(missing)}")


def audit_numbers(records: list[dict], train_questions: list[dict], samples: int = 1000, seed: int = 0) -> dict:
    """The audit's numbers: every block overall and per kind over every replicate's answers, seen against held-out
    when some records are held out (a side with no records is None), the failures read, and each replicate's own
    scores and gaps."""
    check_records(records)
    if samples < 1:
        raise ValueError(f"samples must be at least 1, not {samples}")
    priors = prior_answers(records, train_questions)
    seen_heldout = None
    if any(r["heldout"] for r in records):
        seen_heldout = {}
        for side, heldout in (("seen", False), ("heldout", True)):
            idx = [i for i, r in enumerate(records) if bool(r["heldout"]) is heldout]
            seen_heldout[side] = breakdown([records[i] for i in idx], [priors[i] for i in idx], samples,
                                           seed) if idx else None
    return {"conditions": list(CONDITIONS), **breakdown(records, priors, samples, seed), "seen_heldout": seen_heldout,
            "failures": failures(records), "by_replicate": replicate_cells(records)}
