"""What the language model keeps of its text: perplexity on a fixed passage of ordinary prose, with no picture.

With no picture the connector is never run, so a run whose language model stayed frozen computes exactly what the
base model computes and gets exactly its number; only a run that trained LoRA inside the model can move it.
"""

from __future__ import annotations

import math
from importlib import resources

import torch

from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.precision import autocast


def passage() -> str:
    """A few hundred tokens of plain English prose shipped with the package (written for this project)."""
    return resources.files("frozenbridge.bridge").joinpath("passage.txt").read_text()


@torch.no_grad()
def perplexity(lm: LanguageModel, text: str, device: torch.device, bf16: bool) -> tuple[float, int]:
    """(exp of the mean next-token cross-entropy over `text`, the number of tokens scored)."""
    from frozenbridge.bridge.sequence import Tokens

    tokens = Tokens(lm.tokenizer)
    ids = torch.tensor([tokens.bos + list(tokens.ids(text))], device=device)
    with autocast(device, bf16):
        logits = lm.model(inputs_embeds=lm.embed(ids), use_cache=False).logits
    loss = torch.nn.functional.cross_entropy(logits[0, :-1].float(), ids[0, 1:])
    return math.exp(loss.item()), ids.shape[1] - 1
