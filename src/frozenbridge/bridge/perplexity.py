"""What the language model keeps of its text: perplexity on a fixed passage of ordinary prose, with no picture.

With no picture the connector is never run, so a run whose language model stayed frozen computes exactly what the
base model computes and gets exactly its number; only a run that trained LoRA inside the model can move it.
`language_state` is what a training run records of its language model before and after it trains (a digest of every
weight, the passage's perplexity), so a later check reads the model the run trained with, not a fresh copy of it.
"""

from __future__ import annotations

import math
from importlib import resources

import torch

from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.precision import autocast
from frozenbridge.core.saved_module import weights_digest


def passage() -> str:
    """A few hundred tokens of plain English prose shipped with the package (written for this project)."""
    return resources.files("frozenbridge.bridge").joinpath("passage.txt").read_text()


def context_length(config) -> int | None:
    """The most positions the model takes (None when its config does not say)."""
    for key in ("max_position_embeddings", "n_positions"):
        if isinstance(getattr(config, key, None), int):
            return getattr(config, key)
    return None


@torch.no_grad()
def perplexity(lm: LanguageModel, text: str, device: torch.device, bf16: bool) -> tuple[float, int]:
    """(exp of the mean next-token cross-entropy over `text`, the number of tokens scored): the text's first
    positions only when the model takes fewer than it has (the count says how many)."""
    from frozenbridge.bridge.sequence import Tokens

    tokens = Tokens(lm.tokenizer)
    ids = torch.tensor([tokens.bos + list(tokens.ids(text))], device=device)
    limit = context_length(lm.model.config)
    ids = ids[:, :limit] if limit else ids
    with autocast(device, bf16):
        logits = lm.model(inputs_embeds=lm.embed(ids), use_cache=False).logits
    loss = torch.nn.functional.cross_entropy(logits[0, :-1].float(), ids[0, 1:])
    return math.exp(loss.item()), ids.shape[1] - 1


def language_state(lm: LanguageModel, device: torch.device, bf16: bool) -> dict:
    """{digest: of every weight of the language model as it is now (an injected LoRA adapter included),
    perplexity: on the passage}. Eager even where training compiled the layers (train.compile): the same number
    either way, and no compile of its own."""
    with torch.compiler.set_stance("force_eager"):
        return {"digest": weights_digest(lm.model), "perplexity": perplexity(lm, passage(), device, bf16)[0]}
