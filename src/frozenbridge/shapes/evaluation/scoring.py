"""Scoring a trained run: exact match under four conditions, on seen-pair and held-out-pair test pictures.

Conditions for every item: the right picture, the blank picture, a wrong picture (the picture of another item of
the same task, half the task's items away) and no picture (the prompt alone, without "Image:").
gap = right - max(blank, wrong, none). Wrong-picture answers are also scored against the picture actually shown, on
the items whose answer differs between the two scenes. Work that repeats is done once: every distinct (picture,
prompt) is generated once per test set, whichever items and conditions share it. A test set that holds fewer pictures
or questions of a type than `shapes.evaluate.items` asks is evaluated on all it holds, said in one warning line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from tqdm import tqdm

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Item
from frozenbridge.shapes.data.scene import Shape, questions
from frozenbridge.shapes.data.vocab import CONDITIONS, TASKS, caption_prompt, question_prompt, wrong_pictures
from frozenbridge.shapes.evaluation.exact import exact_match, gap, percent  # noqa: F401 (the scorer's rule, here too)
from frozenbridge.shapes.params import EvaluateParams
from frozenbridge.shapes.training.split_data import SplitData

log = logging.getLogger("frozenbridge.shapes")


@dataclass(frozen=True)
class EvalItem:
    picture: int
    prompt: str
    target: str
    wrong: int  # the picture shown in the wrong-picture condition
    target_on_wrong: str | None  # the right answer for that picture, None where the question is not askable there


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
    out: dict[str, list[EvalItem]] = {}
    for task, task_rows in rows.items():
        wrong = wrong_pictures([pic for pic, _, _ in task_rows])
        out[task] = [EvalItem(pic, prompt, target, w, answer_on(data, w, task, prompt))
                     for (pic, prompt, target), w in zip(task_rows, wrong, strict=True)]
    return out


def answer_on(data: SplitData, pic: int, task: str, prompt: str) -> str | None:
    """What a prompt's right answer is on picture `pic`, or None where the question is not askable there."""
    if task == "caption":
        return data.captions[pic]
    scene = [Shape(**s) for s in data.shapes[pic]]
    return next((q.answer for q in questions(scene) if question_prompt(q.question) == prompt), None)


def generate_once(vlm: VLM, keys: list[tuple[int | None, str]], feats: torch.Tensor, cfg: EvaluateParams,
                  max_new: int, desc: str) -> dict[tuple[int | None, str], str]:
    """Generate for every distinct (picture row, prompt) once; batches hold prompts of one length, so they pad
    little."""
    unique = sorted(set(keys), key=lambda k: (k[0] is None, len(vlm.tokens.ids(k[1])), k[1], k[0] or 0))
    texts: dict[tuple, str] = {}
    for i in tqdm(range(0, len(unique), cfg.batch_size), desc=desc, unit="batch", leave=False):
        chunk = unique[i:i + cfg.batch_size]
        said = vlm.generate([Item(img, prompt, "") for img, prompt in chunk], feats, max_new)
        texts.update(zip(chunk, said, strict=True))
    return texts


def run_generation(vlm: VLM, items: list[Item], feats: torch.Tensor, cfg: EvaluateParams, max_new: int,
                   desc: str) -> list[str]:
    """Predictions for items, generating each distinct (picture, prompt) once."""
    texts = generate_once(vlm, [(it.image, it.prompt) for it in items], feats, cfg, max_new, desc)
    return [texts[(it.image, it.prompt)] for it in items]


def condition_image(item: EvalItem, cond: str, blank_row: int) -> int | None:
    return {"right": item.picture, "blank": blank_row, "wrong": item.wrong, "none": None}[cond]


def evaluate_split(vlm: VLM, data: SplitData, blank: torch.Tensor, cfg: EvaluateParams,
                   name: str) -> tuple[dict, dict]:
    """Scores per task and condition for one test set, and every prediction.

    All prompts of one answer length (captions; one-word answers) are generated together, each distinct
    (picture, prompt) once: a wrong-picture prompt is mostly another item's right-picture prompt, and the blank
    and no-picture prompts repeat across items."""
    feats = torch.cat([data.feats, blank.to(data.feats.dtype)])
    blank_row = len(data.feats)
    items = {task: rows for task, rows in eval_items(data, cfg.items, name).items() if rows}
    texts: dict = {}
    for group, tasks in (("captions", ["caption"]), ("answers", [t for t in TASKS if t != "caption"])):
        keys = [(condition_image(it, cond, blank_row), it.prompt)
                for task in tasks if task in items for it in items[task] for cond in CONDITIONS]
        if keys:
            max_new = cfg.caption_tokens if group == "captions" else cfg.answer_tokens
            texts.update(generate_once(vlm, keys, feats, cfg, max_new, f"{name} {group}"))
    scores: dict = {}
    predictions: dict = {}
    for task, rows in items.items():
        preds = {cond: [texts[(condition_image(it, cond, blank_row), it.prompt)] for it in rows]
                 for cond in CONDITIONS}
        result = {cond: percent(sum(exact_match(p, it.target) for p, it in zip(preds[cond], rows, strict=True)),
                                len(rows))
                  for cond in CONDITIONS}
        differ = [(p, it.target_on_wrong) for p, it in zip(preds["wrong"], rows, strict=True)
                  if it.target_on_wrong is not None and it.target_on_wrong != it.target]
        result.update(gap=gap(result), n=len(rows), n_shown=len(differ),
                      wrong_vs_shown=percent(sum(exact_match(p, shown) for p, shown in differ), len(differ)))
        if task == "caption":
            result["distinct"] = len(set(preds["right"]))
        scores[task] = result
        predictions[task] = [{"picture": it.picture, "wrong_picture": it.wrong, "prompt": it.prompt,
                              "target": it.target, **{cond: preds[cond][i] for cond in CONDITIONS}}
                             for i, it in enumerate(rows)]
    return scores, predictions
