"""The assembled model: cached encoder features -> connector -> frozen language model.

`loss` computes vocabulary logits only at target positions (the rest of the sequence is context), and
`generate` runs batched greedy decoding with the language model's KV cache, one prefill for prompt and picture.
"""

from __future__ import annotations

import torch
from torch import nn

from frozenbridge.bridge.connector import Connector
from frozenbridge.bridge.greedy import greedy_cached, greedy_recompute, strip_after_eos
from frozenbridge.bridge.sequence import IGNORE, Batch, Item, Tokens, build, embed
from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.precision import autocast


class VLM(nn.Module):
    def __init__(self, lm: LanguageModel, connector: Connector, device: torch.device, bf16: bool):
        super().__init__()
        self.lm, self.connector, self.device, self.bf16 = lm, connector, device, bf16
        self.tokens = Tokens(lm.tokenizer)

    def image_tokens(self, feats: torch.Tensor | None, batch: Batch) -> torch.Tensor | None:
        if not batch.images:
            return None
        picked = feats[torch.tensor(batch.images)].to(self.device, torch.float32)
        return self.connector(picked)

    def inputs(self, items: list[Item], feats: torch.Tensor | None, with_target: bool, left_pad: bool):
        batch = build(items, self.tokens, self.connector.n_out, with_target, left_pad)
        ids = batch.ids.to(self.device)
        batch.image_mask = batch.image_mask.to(self.device)
        embeds = embed(batch, self.lm.embed(ids), self.image_tokens(feats, batch))
        return batch, embeds, batch.attention_mask.to(self.device)

    def loss(self, items: list[Item], feats: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over target tokens; logits are computed only where a label exists."""
        batch, embeds, mask = self.inputs(items, feats, with_target=True, left_pad=False)
        model = self.lm.model
        with autocast(self.device, self.bf16):
            # use_cache=False: training needs no KV cache (and a cache object in the call makes compiled layers
            # recompile at every step)
            hidden = model.get_decoder()(inputs_embeds=embeds, attention_mask=mask,
                                         use_cache=False).last_hidden_state
        labels = batch.labels[:, 1:].to(self.device)  # position t predicts token t + 1
        where = labels != IGNORE
        with autocast(self.device, self.bf16):
            logits = model.get_output_embeddings()(hidden[:, :-1][where])
        return nn.functional.cross_entropy(logits.float(), labels[where])

    @torch.no_grad()
    def generate_ids(self, items: list[Item], feats: torch.Tensor | None, max_new_tokens: int,
                     cached: bool = True) -> list[list[int]]:
        """Greedy continuations (token ids before end-of-text): one prefill, then one cached step per token."""
        _, embeds, mask = self.inputs(items, feats, with_target=False, left_pad=True)
        decode = greedy_cached if cached else greedy_recompute
        with autocast(self.device, self.bf16):
            out = decode(self.lm.model, embeds, mask, max_new_tokens, self.tokens.eos, self.tokens.pad)
        return strip_after_eos(out.cpu(), self.tokens.eos, self.tokens.pad)

    def generate(self, items: list[Item], feats: torch.Tensor | None, max_new_tokens: int) -> list[str]:
        ids = self.generate_ids(items, feats, max_new_tokens)
        return [text.strip() for text in self.lm.tokenizer.batch_decode(ids, skip_special_tokens=True)]
