"""Does the frozen encoder hold what a kind of question needs? Linear probes from its features to the answers.

Why (the reference's fourth check, "read the failures before training more"): a wrong answer can come from the
encoder (the detail is not in its vectors), the connector (it does not pass it on) or the language model (it does
not use it), and more question-answer data trains the last two at best. A probe that reads the answer from the frozen
encoder's vectors far better than the model answers says the detail is there and the trained parts fail to use it; a
probe near chance says the encoder may not hold it (not linearly, at least), which no connector training will fix.

What a probe reads per picture: the mean of all the encoder's vectors and the mean of each quadrant of its grid, so
that a detail in one part of the picture is not averaged away; the mean alone when the features have no grid (or a
grid one row or column thin), standardized with the training pictures' mean and spread.

What is probed: a classifier can only name answers it was trained on, so only closed-set kinds (every test answer is
a training answer, and not too many of them); within a kind, one probe per question wording, since one wording asks
one thing (a color kind may mix "what color is the square?" and "what color is the circle?"), when it has enough
training questions and at least two answers. On the same test questions the probe's score is set beside chance (the
wording's most common training answer) and the model's own right-picture score.

A multinomial logistic regression, fitted full-batch by L-BFGS from zeros in float64: deterministic.
"""

from __future__ import annotations

import numpy as np
import torch

from frozenbridge.audit.data.folder import normalize_answer
from frozenbridge.audit.evaluation.checks import hit, most_frequent, percent
from frozenbridge.core.linear_probe import fit_linear_probe

STD_FLOOR = 1e-6  # a feature constant over the training pictures is centered, not blown up


def quadrants(grid: tuple[int, int] | None) -> bool:
    """The grid splits into four quadrants: it has one, at least two rows and two columns."""
    return grid is not None and grid[0] >= 2 and grid[1] >= 2


def probe_inputs(feats: torch.Tensor, grid: tuple[int, int] | None) -> np.ndarray:
    """(pictures, 5 * width) float64: per picture, the mean of all tokens then the means of the grid's quadrants
    (top-left, top-right, bottom-left, bottom-right; rows and columns split at rows // 2 and cols // 2); (pictures,
    width), the mean alone, without a grid or with one too thin to split."""
    x = feats.detach().to("cpu", torch.float64)
    pictures, tokens, width = x.shape
    if grid is not None and grid[0] * grid[1] != tokens:
        raise ValueError(f"a {grid[0]} x {grid[1]} grid has {grid[0] * grid[1]} cells, the features {tokens} tokens")
    parts = [x.mean(1)]
    if quadrants(grid):
        rows, cols = grid
        cells = x.reshape(pictures, rows, cols, width)
        r, c = rows // 2, cols // 2
        parts += [q.mean((1, 2)) for q in (cells[:, :r, :c], cells[:, :r, c:], cells[:, r:, :c], cells[:, r:, c:])]
    return torch.cat(parts, 1).numpy()


def input_sentence(feats: torch.Tensor, grid: tuple[int, int] | None) -> str:
    """What the probe reads, in one plain sentence for the page."""
    tokens, width = feats.shape[1:]
    if quadrants(grid):
        return (f"the mean and the four quadrant means of the frozen encoder's {grid[0]} x {grid[1]} grid, "
                f"{5 * width:,} numbers a picture")
    where = f"{grid[0]} x {grid[1]} grid (too thin for quadrants)" if grid else f"{tokens} vectors (no grid)"
    return f"the mean of the frozen encoder's {where}, {width:,} numbers a picture"


def open_reason(train_answers: list[str], test_answers: list[str], max_classes: int) -> str | None:
    """Why a kind is not a closed set (answers normalized), or None when it is one."""
    if not train_answers:
        return "no training question has this kind"
    unseen = set(test_answers) - set(train_answers)
    if unseen:
        return f"{len(unseen)} test answer{'s never appear' if len(unseen) > 1 else ' never appears'} in training"
    distinct = len(set(train_answers))
    if distinct > max_classes:
        return f"{distinct} distinct answers (more than {max_classes})"
    return None


def probe_kind(train_x: np.ndarray, test_x: np.ndarray, train_questions: list[dict], records: list[dict],
               min_examples: int, l2: float, iterations: int) -> dict:
    """One closed kind: a probe per wording with min_examples training questions and 2 answers that the test asks,
    scored with chance and the model on the test questions of those wordings (the model over every replicate's
    answers)."""
    by_wording: dict[str, list[dict]] = {}
    for q in train_questions:
        by_wording.setdefault(normalize_answer(q["question"]), []).append(q)
    probed = {w: qs for w, qs in by_wording.items()
              if len(qs) >= min_examples and len({normalize_answer(q["answer"]) for q in qs}) >= 2}
    asked: dict[str, list[dict]] = {}
    for r in records:
        if normalize_answer(r["question"]) in probed:
            asked.setdefault(normalize_answer(r["question"]), []).append(r)
    classes = len({normalize_answer(q["answer"]) for q in train_questions})
    if not asked:
        why = (f"no test question asks one of the {len(probed)} wordings with a probe" if probed else
               f"no wording has {min_examples} training questions with 2 answers")
        return {"closed": True, "questions": 0, "why": why}
    probe_hits = chance_hits = model_hits = 0
    for wording in sorted(asked):
        answers = [normalize_answer(q["answer"]) for q in probed[wording]]
        names = sorted(set(answers))
        predict = fit_linear_probe(train_x[[q["picture"] for q in probed[wording]]],
                                   np.array([names.index(a) for a in answers]), len(names), l2, iterations)
        tests = asked[wording]
        guesses = predict(test_x[[r["picture"] for r in tests]])
        common = most_frequent(answers)
        for r, guess in zip(tests, guesses):
            truth = normalize_answer(r["answer"])
            probe_hits += names[guess] == truth
            chance_hits += common == truth
            model_hits += hit(r["said"]["right"], r["answer"])
    n = sum(len(t) for t in asked.values())
    replicates = len({r.get("replicate", 0) for t in asked.values() for r in t})  # each question once a replicate
    return {"closed": True, "wordings": len(asked), "questions": n // replicates, "classes": classes,
            "probe": percent(probe_hits, n), "chance": percent(chance_hits, n), "model": percent(model_hits, n)}


def probe_kinds(train_feats: torch.Tensor, test_feats: torch.Tensor, grid: tuple[int, int] | None,
                train_questions: list[dict], records: list[dict], max_classes: int = 20, min_examples: int = 10,
                l2: float = 1e-3, iterations: int = 200) -> dict:
    """{"input": what the probe reads, "kinds": {kind: closed-set probes' numbers, or why the kind is open}} for
    every named kind of the test records, sorted (questions without a kind are not probed)."""
    if train_feats.shape[1:] != test_feats.shape[1:]:
        raise ValueError(f"training features are {tuple(train_feats.shape[1:])} a picture, test features "
                         f"{tuple(test_feats.shape[1:])}: both must come from the same encoder")
    train_x, test_x = probe_inputs(train_feats, grid), probe_inputs(test_feats, grid)
    mean, std = train_x.mean(0), np.maximum(train_x.std(0), STD_FLOOR)
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    kinds = {}
    for kind in sorted({r["kind"] for r in records if r.get("kind") is not None}):
        train_k = [q for q in train_questions if q.get("kind") == kind]
        test_k = [r for r in records if r.get("kind") == kind]
        why = open_reason([normalize_answer(q["answer"]) for q in train_k],
                          [normalize_answer(r["answer"]) for r in test_k], max_classes)
        kinds[kind] = {"closed": False, "why": why} if why else probe_kind(train_x, test_x, train_k, test_k,
                                                                           min_examples, l2, iterations)
    return {"input": input_sentence(train_feats, grid), "kinds": kinds}
