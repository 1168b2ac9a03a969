"""Scoring a trained run: exact match under the four conditions (core.controls), on seen-pair and held-out-pair test
pictures.

Conditions for every item: the right picture, the blank picture, a wrong picture (the picture of another item of
the same task and test set, half the task's items away: core.controls.wrong_pictures) and no picture (the prompt
alone, without "Image:"). gap = right - max(blank, wrong, none). Wrong-picture answers are also scored against the
picture actually shown, on the items whose answer differs between the two scenes. The asking is the audit's too
(bridge.ask): every distinct (picture, prompt) is generated once per test set, whichever items and conditions share
it. A test set that holds fewer pictures or questions of a type than `shapes.evaluate.items` asks is evaluated on
all it holds, said in one warning line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from frozenbridge.bridge.ask import answer, generate_once
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Item
from frozenbridge.core.controls import CONDITIONS, Asked, asked_in_groups
from frozenbridge.shapes.data.scene import Shape, questions
from frozenbridge.shapes.data.vocab import TASKS, caption_prompt, question_prompt
from frozenbridge.shapes.evaluation.exact import exact_match, gap, percent
from frozenbridge.shapes.params import EvaluateParams
from frozenbridge.shapes.training.split_data import SplitData

log = logging.getLogger("frozenbridge.shapes")


@dataclass(frozen=True)
class EvalItem(Asked):
    target_on_wrong: str | None = None  # the right answer for the wrong picture, None where it is not askable there


def short_of(n: int, rows: dict[str, list], name: str | None = None) -> str | None:
    """The one warning line for a test set with fewer items of some task than `shapes.evaluate.items` = n asks, or
    None when every task has n."""
    short = {task: len(task_rows) for task, task_rows in rows.items() if len(task_rows) < n}
    if not short:
        return None
    held = [f"{k} pictures" if task == "caption" else f"{k} {task} questions" for task, k in short.items()]
    listed = held[0] if len(held) == 1 else f"{', '.join(held[:-1])} and {held[-1]}"
    used = str(next(iter(short.values()))) if len(short) == 1 else f"those instead of {n} each"
    label = {"heldout": "held-out"}.get(name, name)
    return f"shapes.evaluate.items={n}: the {label + ' ' if label else ''}test set holds {listed}; evaluating {used}"


def eval_items(data: SplitData, n: int, name: str | None = None) -> dict[str, list[EvalItem]]:
    """Per task, the first n items in picture order, each with its wrong picture and the answer that picture has;
    where the test set (`name`) holds fewer, all it holds, said in one warning line."""
    rows: dict[str, list[tuple[int, str, str]]] = {t: [] for t in TASKS}
    for pic in range(min(n, len(data.captions))):
        rows["caption"].append((pic, caption_prompt(), data.captions[pic]))
    for pic, qs in enumerate(data.questions):
        for q in qs:
            if len(rows[q["type"]]) < n:
                rows[q["type"]].append((pic, question_prompt(q["question"]), q["answer"]))
    if (line := short_of(n, rows, name)) is not None:
        log.warning("%s", line)
    return {task: [EvalItem(a.picture, a.prompt, a.target, a.wrong, answer_on(data, a.wrong, task, a.prompt))
                   for a in asked] for task, asked in asked_in_groups(rows).items()}


def answer_on(data: SplitData, pic: int, task: str, prompt: str) -> str | None:
    """What a prompt's right answer is on picture `pic`, or None where the question is not askable there."""
    if task == "caption":
        return data.captions[pic]
    scene = [Shape(**s) for s in data.shapes[pic]]
    return next((q.answer for q in questions(scene) if question_prompt(q.question) == prompt), None)


def run_generation(vlm: VLM, items: list[Item], feats: torch.Tensor, cfg: EvaluateParams, max_new: int,
                   desc: str) -> list[str]:
    """Predictions for items, generating each distinct (picture, prompt) once."""
    texts = generate_once(vlm, [(it.image, it.prompt) for it in items], feats, cfg.batch_size, max_new, desc)
    return [texts[(it.image, it.prompt)] for it in items]


def evaluate_split(vlm: VLM, data: SplitData, blank: torch.Tensor, cfg: EvaluateParams,
                   name: str) -> tuple[dict, dict]:
    """Scores per task and condition for one test set, and every prediction.

    All prompts of one answer length (captions; one-word answers) are generated together, each distinct
    (picture, prompt) once: a wrong-picture prompt is mostly another item's right-picture prompt, and the blank
    and no-picture prompts repeat across items."""
    feats = torch.cat([data.feats, blank.to(data.feats.dtype)])
    blank_row = len(data.feats)
    items = {task: rows for task, rows in eval_items(data, cfg.items, name).items() if rows}
    preds: dict[str, dict[str, list[str]]] = {}
    for group, tasks in (("captions", ["caption"]), ("answers", [t for t in TASKS if t != "caption"])):
        asked = [it for task in tasks if task in items for it in items[task]]
        if asked:
            max_new = cfg.caption_tokens if group == "captions" else cfg.answer_tokens
            said = answer(vlm, asked, feats, blank_row, cfg.batch_size, max_new, f"{name} {group}")
            start = 0
            for task in (t for t in tasks if t in items):
                end = start + len(items[task])
                preds[task] = {cond: said[cond][start:end] for cond in CONDITIONS}
                start = end
    scores: dict = {}
    predictions: dict = {}
    for task, rows in items.items():
        result = {cond: percent(sum(exact_match(p, it.target) for p, it in zip(preds[task][cond], rows, strict=True)),
                                len(rows))
                  for cond in CONDITIONS}
        differ = [(p, it.target_on_wrong) for p, it in zip(preds[task]["wrong"], rows, strict=True)
                  if it.target_on_wrong is not None and it.target_on_wrong != it.target]
        result.update(gap=gap(result), n=len(rows), n_shown=len(differ),
                      wrong_vs_shown=percent(sum(exact_match(p, shown) for p, shown in differ), len(differ)))
        if task == "caption":
            result["distinct"] = len(set(preds[task]["right"]))
        scores[task] = result
        predictions[task] = [{"picture": it.picture, "wrong_picture": it.wrong, "prompt": it.prompt,
                              "target": it.target, **{cond: preds[task][cond][i] for cond in CONDITIONS}}
                             for i, it in enumerate(rows)]
    return scores, predictions
