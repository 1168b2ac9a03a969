"""When stage 1 stops: after `train.stage1_steps` at the least, once the run writes its own training captions.

Why a rule read from the run: language models learn to read the connector at very different paces, and even one
model's seeds differ widely at a given step (the convergence table by language model in docs/results.md, from
bench/converge-models.json). The settings of the model's own that were tried (the scale of its input embeddings,
the connector's start) did not predict the pace, and a step count tuned on SmolLM2 leaves the others half trained.
So stage 1 trains `stage1_steps`, then, every `stage1_until.every`
steps, captions its first `stage1_until.items` training pictures greedily and stops once a `stage1_until.share` of
them is exactly right, or at `stage1_until.max_steps`. It reads training pictures only: the test sets stay unseen.
A model that passes at `stage1_steps` trains exactly as it did without the rule, and the check after the last step
leaves its weights as they are.
"""

from __future__ import annotations

import logging

import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.shapes.evaluation.exact import exact_match
from frozenbridge.shapes.evaluation.scoring import run_generation
from frozenbridge.shapes.params import EvaluateParams, TrainParams
from frozenbridge.shapes.training.split_data import SplitData

log = logging.getLogger("frozenbridge.train")


def caption_accuracy(vlm: VLM, split: SplitData, items: int, cfg: EvaluateParams) -> float:
    """Percent of the first `items` pictures of `split` (all, if it holds fewer) captioned exactly, greedily."""
    rows = [split.caption_item(i) for i in range(min(items, len(split.captions)))]
    preds = run_generation(vlm, rows, split.feats, cfg, cfg.caption_tokens, "captions")
    return 100.0 * sum(exact_match(p, r.target) for p, r in zip(preds, rows)) / len(rows)


def is_check(step: int, t: TrainParams) -> bool:
    """Whether the rule reads the training captions after `step`."""
    u = t.stage1_until
    return u.share > 0 and step >= t.stage1_steps and (step - t.stage1_steps) % u.every == 0


def rule_steps(t: TrainParams) -> int:
    """The most steps stage 1 may train: max_steps with the rule on, else stage1_steps."""
    return t.stage1_until.max_steps if t.stage1_until.share > 0 else t.stage1_steps


def stop_step(checks: list[tuple[int, float]], t: TrainParams) -> int:
    """The step the rule stops at, given the exact-caption percents it read at its checks."""
    return next((s for s, exact in checks if exact >= 100 * t.stage1_until.share), rule_steps(t))


class Stage1Rule:
    """`after_step` for stage 1: True (stop) once the rule is met; the percents it read are in `checks`."""

    def __init__(self, vlm: VLM, data: SplitData, t: TrainParams, cfg: EvaluateParams, run: str):
        self.vlm, self.data, self.t, self.cfg, self.run = vlm, data, t, cfg, run
        self.checks: list[tuple[int, float]] = []

    def __call__(self, step: int) -> bool:
        if not is_check(step, self.t):
            return False
        self.vlm.connector.eval()
        with torch.compiler.set_stance("force_eager"):  # compiled layers are for training: decode as evaluation does
            exact = round(caption_accuracy(self.vlm, self.data, self.t.stage1_until.items, self.cfg), 2)
        self.vlm.connector.train()
        self.checks.append((step, exact))
        met = exact >= 100 * self.t.stage1_until.share
        log.info("%s: step %d, %.1f%% of its first %d training captions exact (stops at %.0f%%): %s", self.run, step,
                 exact, self.t.stage1_until.items, 100 * self.t.stage1_until.share,
                 "stops" if met else ("stops at its most steps" if step >= rule_steps(self.t) else "goes on"))
        return met
