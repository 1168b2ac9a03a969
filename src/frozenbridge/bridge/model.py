"""The assembled model: cached encoder features -> connector -> frozen language model.

`loss` computes vocabulary logits only at target positions (the rest of the sequence is context), and
`generate` runs batched greedy decoding with the language model's KV cache, one prefill for prompt and picture.
A batch with packed rows (a picture once, then its questions) runs with a 4D mask and position ids when the language
model gives it the same loss as the questions unpacked: checked once, on the first packed batch; a model that does
not (an attention implementation that ignores custom masks, positions computed from the mask) trains on the same
questions unpacked, said in the log.
"""

from __future__ import annotations

import contextlib
import inspect
import logging

import torch
from torch import nn

from frozenbridge.bridge.design import Design
from frozenbridge.bridge.greedy import greedy_cached, greedy_recompute, strip_after_eos
from frozenbridge.bridge.sequence import IGNORE, Batch, Item, Packed, Tokens, build, embed, unpack
from frozenbridge.core.backbones.language import LanguageModel, output_logits
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.precision import autocast

log = logging.getLogger("frozenbridge.model")
MASKS = {"sdpa": "bool", "eager": "additive"}  # attention implementations that read a custom 4D mask, and its form

class VLM(nn.Module):
    def __init__(self, lm: LanguageModel, connector: Design, device: torch.device, bf16: bool):
        super().__init__()
        self.lm, self.connector, self.device, self.bf16 = lm, connector, device, bf16
        self.tokens = Tokens(lm.tokenizer)
        self.packing: bool | None = None  # whether packed rows are run packed: decided on the first packed batch
        if connector.reads_inside:  # a design that reads the picture from inside the language model
            connector.attach(decoder_layers(lm.model))

    def image_tokens(self, feats: torch.Tensor | None, batch: Batch) -> torch.Tensor | None:
        if not batch.images or not self.connector.n_out:
            return None
        picked = feats[torch.tensor(batch.images)].to(self.device, torch.float32)
        return self.connector(picked)

    def inputs(self, items: list[Item], feats: torch.Tensor | None, with_target: bool, left_pad: bool):
        batch = build(items, self.tokens, self.connector.n_out, with_target, left_pad)
        ids = batch.ids.to(self.device)
        batch.image_mask = batch.image_mask.to(self.device)
        embeds = embed(batch, self.lm.embed(ids), self.image_tokens(feats, batch))
        return batch, embeds, batch.attention_mask.to(self.device)

    def reading(self, batch: Batch, feats: torch.Tensor | None):
        """For a design that reads the picture from inside the language model (cross-attention): each batch row's
        picture, for the language model's forwards within the block; for the others, nothing to do."""
        if not self.connector.reads_inside:
            return contextlib.nullcontext()
        rows = batch.row_pictures
        if any(len(pictures) > 1 for pictures in rows):
            raise FrozenbridgeError(f"{self.connector.design}: one picture a row; an item with two pictures needs a "
                                    "design that puts image tokens in the sequence (mlp, resampler, codebook)")
        has = torch.tensor([bool(pictures) for pictures in rows], device=self.device)
        if feats is None:
            rows_cols = self.connector.feature_shape[0] * self.connector.feature_shape[1]
            picked = torch.zeros(len(rows), rows_cols, self.connector.feature_shape[2], device=self.device)
        else:
            picked = feats[torch.tensor([p[0] if p else 0 for p in rows])].to(self.device, torch.float32)
        return self.connector.reading(picked, has)

    def loss(self, items: list, feats: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over target tokens; logits are computed only where a label exists. Packed rows give
        the loss of their questions unpacked (run packed when the model allows, see `packs`)."""
        if any(isinstance(item, Packed) for item in items) and not self.packs(items, feats):
            items = unpack(items)
        return self._loss(items, feats, self.bf16)

    def _loss(self, items: list, feats: torch.Tensor, bf16: bool) -> torch.Tensor:
        batch, embeds, mask = self.inputs(items, feats, with_target=True, left_pad=False)
        model, extra = self.lm.model, {}
        if batch.segments is not None:
            mask, extra = self.packed_mask(batch), {"position_ids": batch.positions.to(self.device)}
        with autocast(self.device, bf16), self.reading(batch, feats):
            # use_cache=False: training needs no KV cache (and a cache object in the call makes compiled layers
            # recompile at every step)
            hidden = model.get_decoder()(inputs_embeds=embeds, attention_mask=mask, use_cache=False,
                                         **extra).last_hidden_state
        labels = batch.labels[:, 1:].to(self.device)  # position t predicts token t + 1
        where = labels != IGNORE
        with autocast(self.device, bf16):
            logits = output_logits(model, hidden[:, :-1][where])
        return nn.functional.cross_entropy(logits.float(), labels[where])

    def packed_mask(self, batch: Batch) -> torch.Tensor | dict[str, torch.Tensor]:
        """The packed rows' 4D mask, in the form the attention implementation reads. A sliding-window model's
        sliding layers get the window on positions (each question's keys within the window it has alone): the one
        mask when every layer slides (Mistral), else one per layer type, as transformers' own masks (Gemma2)."""
        config = self.lm.model.config
        window = getattr(config, "sliding_window", None)
        types = set(getattr(config, "layer_types", None) or ["sliding_attention"])
        if not isinstance(window, int) or "sliding_attention" not in types:
            return self._mask_form(batch.attention_4d())
        windowed = self._mask_form(batch.attention_4d(window))
        if types == {"sliding_attention"}:
            return windowed
        return {kind: windowed if kind == "sliding_attention" else self._mask_form(batch.attention_4d())
                for kind in types}

    def _mask_form(self, allowed: torch.Tensor) -> torch.Tensor:
        allowed = allowed.to(self.device)
        if MASKS.get(self.attention_implementation()) == "bool":
            return allowed
        return torch.zeros(allowed.shape, device=self.device).masked_fill(~allowed, torch.finfo(torch.float32).min)

    def attention_implementation(self) -> str:
        return getattr(self.lm.model.config, "_attn_implementation", None) or "eager"

    def packs(self, items: list, feats: torch.Tensor) -> bool:
        """Run packed rows packed? Decided once: the attention implementation must read a custom 4D mask, and the
        first packed batch's first two rows must give, in fp32, the loss of their questions unpacked."""
        if self.packing is None:
            self.packing, why = self._check_packing([i for i in items if isinstance(i, Packed)][:2], feats)
            if self.packing:
                log.info("packed question batches: each picture's tokens once a batch row, its questions after "
                         "it (%s)", why)
            else:
                log.info("packed question batches: not with this language model (%s); its questions run "
                         "unpacked, one sequence each: the same loss, more tokens", why)
        return self.packing

    @torch.no_grad()
    def _check_packing(self, rows: list[Packed], feats: torch.Tensor) -> tuple[bool, str]:
        impl = self.attention_implementation()
        if impl not in MASKS:
            return False, f"attention implementation {impl!r} does not read a custom 4D mask"
        decoder = self.lm.model.get_decoder()
        if getattr(self.lm.model.config, "alibi", None) is True or (
                "position_ids" not in inspect.signature(decoder.forward).parameters):
            return False, (f"{type(decoder).__name__} computes its positions from the padding mask, not from position "
                           f"ids (ALiBi: BLOOM, MPT, Falcon with alibi)")
        try:
            with fp32_for_a_while(self.lm.model), torch.compiler.set_stance("force_eager"):  # no fp32 compile
                packed, alone = (float(self._loss(r, feats, bf16=False)) for r in (rows, unpack(rows)))
        except (TypeError, ValueError, RuntimeError, IndexError, AttributeError, KeyError) as e:
            return False, f"the packed forward failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        if abs(packed - alone) > 1e-4 * max(1.0, abs(alone)):
            return False, f"a packed row's loss {packed:.6f} differs from its questions' unpacked {alone:.6f}"
        return True, f"checked in fp32 on the first batch: loss {packed:.6f} packed, {alone:.6f} unpacked"

    @torch.no_grad()
    def generate_ids(self, items: list[Item], feats: torch.Tensor | None, max_new_tokens: int,
                     cached: bool = True) -> list[list[int]]:
        """Greedy continuations (token ids before end-of-text): one prefill, then one cached step per token."""
        batch, embeds, mask = self.inputs(items, feats, with_target=False, left_pad=True)
        decode = greedy_cached if cached else greedy_recompute
        with autocast(self.device, self.bf16), self.reading(batch, feats):
            out = decode(self.lm.model, embeds, mask, max_new_tokens, self.tokens.eos, self.tokens.pad)
        return strip_after_eos(out.cpu(), self.tokens.eos, self.tokens.pad)

    def generate(self, items: list[Item], feats: torch.Tensor | None, max_new_tokens: int) -> list[str]:
        ids = self.generate_ids(items, feats, max_new_tokens)
        return [text.strip() for text in self.lm.tokenizer.batch_decode(ids, skip_special_tokens=True)]


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The language model's decoder layers, in order, under the name its family gives them (layers: Llama, Qwen,
    Gemma, OPT, Phi; h: GPT-2, BLOOM, Falcon, GPTBigCode)."""
    decoder = model.get_decoder()
    for name in ("layers", "h", "blocks"):
        if isinstance(found := getattr(decoder, name, None), nn.ModuleList):
            return found
    raise FrozenbridgeError(f"{type(decoder).__name__}: no list of decoder layers found (layers, h, blocks); "
                            "cross-attention cannot be inserted")


@contextlib.contextmanager
def fp32_for_a_while(model: nn.Module):
    """The model's bf16 weights in fp32 for the block, then back to each tensor's own dtype: exact both ways (every
    bf16 value is an fp32 one), so the check compares in fp32 what training runs in bf16, and fp32 tensors (a LoRA
    adapter) are never touched."""
    dtypes = {t: t.dtype for t in (*model.parameters(), *model.buffers()) if t.dtype == torch.bfloat16}
    for t in dtypes:
        t.data = t.data.float()
    try:
        yield
    finally:
        for t, dtype in dtypes.items():
            t.data = t.data.to(dtype)
