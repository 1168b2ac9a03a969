"""Text, a picture, or both: does a trained run keep its language model's text? Perplexity of every run's language
model on the package's passage (no picture: the connector never runs), beside the base model's, and what each run
replies to the no-picture prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.perplexity import passage, perplexity
from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.backbones import load_language
from frozenbridge.core.precision import prepare_frozen
from frozenbridge.shapes.data.vocab import QUESTION_TASKS
from frozenbridge.shapes.paths import model_dir, run_dir


def text_check(name: str, recipes: tuple[str, ...], replicates: tuple[int, ...], runs: Path,
               device: torch.device, bf16: bool, also: Callable[[VLM], dict] | None = None) -> dict:
    """The base model's perplexity and every run's, each run's language model loaded from its own saved run;
    `also(model)` adds its entries to each run's (what else to ask the rebuilt model while it is loaded)."""
    text = passage()
    base_lm = load_language(name)
    prepare_frozen(base_lm.model, device, bf16)
    base, tokens = perplexity(base_lm, text, device, bf16)
    out: dict = {"passage_tokens": tokens, "base": round(base, 4), "runs": {}}
    for recipe in recipes:
        for rep in replicates:
            run = load_run(model_dir(runs, recipe, rep), device, bf16)
            ppl, _ = perplexity(run.model.lm, text, device, bf16)
            entry = {"perplexity": round(ppl, 4), "equals_base": ppl == base, "lora": bool(run.config.get("lora"))}
            out["runs"].setdefault(recipe, {})[str(rep)] = {**entry, **(also(run.model) if also else {})}
    return out


def no_picture_replies(recipes: tuple[str, ...], replicate: int, runs: Path, test: str = "seen") -> dict:
    """recipe -> task -> {prompt, target, reply}: what the run wrote to the first question of each kind with no
    picture (from its predictions.json)."""
    out: dict = {}
    for recipe in recipes:
        predictions = json.loads((run_dir(runs, recipe, replicate) / "predictions.json").read_text())[test]
        for task in QUESTION_TASKS:
            if predictions.get(task):
                first = predictions[task][0]
                out.setdefault(recipe, {})[task] = {"prompt": first["prompt"], "target": first["target"],
                                                    "reply": first["none"]}
    return out
