"""Text, a picture, or both: does a trained run keep its language model's text?

Each training run recorded, in its run.json, its language model's weights digest and its perplexity on the package's
passage (no picture: the connector never runs) before and after it trained, with the very model it trained. The
check reads those: a run's text is the base model's when its weights digest is unchanged by training, its model
before training was the base model (the digest equals the base model's, loaded here), and its perplexity after
training equals its perplexity before exactly. A run that changed its language model fails it, LoRA's runs
included. The perplexity of the run rebuilt from its saved folder is given beside it (what `load_run` gives a
user), with what each run replies to the no-picture prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.perplexity import passage, perplexity
from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.backbones import load_language
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.precision import prepare_frozen
from frozenbridge.core.saved_module import weights_digest
from frozenbridge.shapes.data.vocab import QUESTION_TASKS
from frozenbridge.shapes.paths import model_dir, run_dir


def language_check(run_json: Path) -> dict:
    """The before/after record of a run's language model, from its run.json."""
    check = json.loads(Path(run_json).read_text()).get("language_check")
    if check is None:
        raise FrozenbridgeError(f"{run_json}: no language_check (trained by an older version); retrain the run")
    return check


def text_check(name: str, recipes: tuple[str, ...], replicates: tuple[int, ...], runs: Path,
               device: torch.device, bf16: bool, also: Callable[[VLM], dict] | None = None) -> dict:
    """The base model's digest and perplexity, and every run's check (see the module's docstring); `also(model)`
    adds its entries to each run's (what else to ask the rebuilt model while it is loaded)."""
    text = passage()
    base_lm = load_language(name)
    prepare_frozen(base_lm.model, device, bf16)
    base, tokens = perplexity(base_lm, text, device, bf16)
    digest = weights_digest(base_lm.model)
    out: dict = {"passage_tokens": tokens, "base": round(base, 4), "base_digest": digest, "runs": {}}
    for recipe in recipes:
        for rep in replicates:
            folder = model_dir(runs, recipe, rep)
            check = language_check(folder / "run.json")
            before, after = check["before"], check["after"]
            run = load_run(folder, device, bf16)
            rebuilt, _ = perplexity(run.model.lm, text, device, bf16)
            entry = {"perplexity": round(after["perplexity"], 4), "rebuilt_perplexity": round(rebuilt, 4),
                     "started_from_base": before["digest"] == digest,
                     "weights_unchanged": before["digest"] == after["digest"],
                     "equals_base": before["digest"] == after["digest"] == digest
                     and after["perplexity"] == before["perplexity"],
                     "lora": bool(run.config.get("lora"))}
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
