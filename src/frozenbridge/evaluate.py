"""Scoring a trained run: exact match under four conditions, on seen-pair and held-out-pair test pictures.

Conditions for every item: the right picture, the blank picture, a wrong picture (another test scene, the one
half the set away) and no picture (the prompt alone, without "Image:"). gap = right - max(blank, wrong, none).
Wrong-picture answers are also scored against the picture actually shown, on the items whose answer differs
between the two scenes. Blank and no-picture prompts repeat, so each distinct one is generated once.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from tqdm import tqdm

from .data.scene import Shape, caption, questions
from .params import EvaluateParams
from .rundata import SplitData
from .sequence import Item, caption_prompt, question_prompt
from .vlm import VLM

TASKS = ("caption", "count", "binding", "leftmost")
CONDITIONS = ("right", "blank", "wrong", "none")


def exact_match(prediction: str, target: str) -> bool:
    return prediction.strip() == target.strip()


def percent(hits: int, n: int) -> float:
    return round(100.0 * hits / n, 2) if n else 0.0


def gap(scores: dict[str, float]) -> float:
    return round(scores["right"] - max(scores["blank"], scores["wrong"], scores["none"]), 2)


def answer_on(shapes: list[dict], question: str) -> str | None:
    """The answer a question has on another scene, or None where it is not askable there."""
    scene = [Shape(**s) for s in shapes]
    return next((q.answer for q in questions(scene) if q.question == question), None)


def eval_items(data: SplitData, n: int) -> dict[str, list[tuple[int, str, str, str | None]]]:
    """Per task, up to n (picture, prompt, answer, answer on the wrong picture) in picture order."""
    pics = len(data.captions)
    wrong = [(i + pics // 2) % pics for i in range(pics)]
    out: dict[str, list] = {t: [] for t in TASKS}
    for pic in range(min(n, pics)):
        shown = data.shapes[wrong[pic]]
        out["caption"].append((pic, caption_prompt(), data.captions[pic], caption([Shape(**s) for s in shown])))
    for pic, qs in enumerate(data.questions):
        for q in qs:
            if len(out[q["type"]]) < n:
                out[q["type"]].append((pic, question_prompt(q["question"]), q["answer"],
                                       answer_on(data.shapes[wrong[pic]], q["question"])))
    return out


def run_generation(vlm: VLM, items: list[Item], feats: torch.Tensor, cfg: EvaluateParams, max_new: int,
                   desc: str) -> list[str]:
    """Generate for items, once per distinct (picture, prompt) pair, in batches."""
    unique = list(dict.fromkeys((it.image, it.prompt) for it in items))
    texts: dict[tuple, str] = {}
    for i in tqdm(range(0, len(unique), cfg.batch_size), desc=desc, unit="batch", leave=False):
        chunk = unique[i:i + cfg.batch_size]
        outs = vlm.generate([Item(img, prompt, "") for img, prompt in chunk], feats, max_new)
        texts.update(zip(chunk, outs))
    return [texts[(it.image, it.prompt)] for it in items]


def evaluate_split(vlm: VLM, data: SplitData, blank: torch.Tensor, cfg: EvaluateParams, name: str) -> tuple[dict, dict]:
    """Scores per task and condition for one test set, plus sample predictions."""
    feats = torch.cat([data.feats, blank.to(data.feats.dtype)])
    blank_row, pics = len(data.feats), len(data.captions)
    wrong_of = lambda pic: (pic + pics // 2) % pics  # noqa: E731
    scores: dict = {}
    samples: dict = defaultdict(list)
    for task, rows in eval_items(data, cfg.items).items():
        if not rows:
            continue
        max_new = cfg.caption_tokens if task == "caption" else cfg.answer_tokens
        image = {"right": lambda p: p, "blank": lambda p: blank_row, "wrong": wrong_of, "none": lambda p: None}
        preds = {cond: run_generation(vlm, [Item(image[cond](p), prompt, ans) for p, prompt, ans, _ in rows],
                                      feats, cfg, max_new, f"{name} {task} {cond}") for cond in CONDITIONS}
        result = {cond: percent(sum(exact_match(pr, r[2]) for pr, r in zip(preds[cond], rows)), len(rows))
                  for cond in CONDITIONS}
        differ = [(pr, r[3]) for pr, r in zip(preds["wrong"], rows) if r[3] is not None and r[3] != r[2]]
        result.update(gap=gap(result), n=len(rows), n_shown=len(differ),
                      wrong_vs_shown=percent(sum(exact_match(pr, shown) for pr, shown in differ), len(differ)))
        if task == "caption":
            result["distinct"] = len(set(preds["right"]))
        scores[task] = result
        for (p, prompt, ans, _), pr in list(zip(rows, preds["right"]))[:5]:
            samples[task].append({"picture": p, "prompt": prompt, "target": ans, "prediction": pr})
    return scores, dict(samples)
