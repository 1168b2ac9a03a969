"""Captions through a frozen text model once, cached to Parquet in the feature cache's format (one row a text:
id, the vector as a 1 x width tensor, the text, its token ids), so training a text tower never re-embeds.

The frozen language model's vector of a caption is the mean of its last hidden states over the caption's tokens
(or the last token's state, `retrieval.text.pool: last`); a CLIP or SigLIP model's is its own text tower's output
(`get_text_features`, the vector its image embeddings are trained against).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import load_feature_tensor, write_features
from frozenbridge.core.precision import autocast, prepare_frozen

EXTRA = (pa.field("text", pa.string()), pa.field("tokens", pa.list_(pa.int32())))


@dataclass
class TextFeatures:
    texts: list[str]
    feats: torch.Tensor  # (texts, width) float32
    tokens: list[list[int]]
    meta: dict

    def index(self, texts: list[str]) -> torch.Tensor:
        """Row of each text; one clear line for a text the cache lacks."""
        rows = {t: i for i, t in enumerate(self.texts)}
        missing = [t for t in texts if t not in rows]
        if missing:
            raise FrozenbridgeError(f"{self.meta.get('path')}: no embedding of {missing[0]!r} ({len(missing)} "
                                    f"texts missing); rerun `dvc repro retrieval_embed`")
        return torch.tensor([rows[t] for t in texts])


def _pool(hidden: torch.Tensor, mask: torch.Tensor, pool: str) -> torch.Tensor:
    mask = mask.to(hidden.dtype)
    if pool == "mean":
        return (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    last = mask.long().sum(1) - 1  # right padding: the last real token
    return hidden[torch.arange(len(hidden)), last]


def lm_batches(lm, texts: list[str], pool: str, batch_size: int, device: torch.device,
               bf16: bool) -> Iterator[tuple[np.ndarray, torch.Tensor, dict]]:
    """(ids, vectors (n, 1, width), {text, tokens}) a batch, from a frozen LanguageModel's base model (no
    vocabulary head)."""
    prepare_frozen(lm.model, device, bf16)
    lm.tokenizer.padding_side = "right"
    base = lm.model.base_model
    for start in range(0, len(texts), batch_size):
        chunk = texts[start:start + batch_size]
        enc = lm.tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.no_grad(), autocast(device, bf16):
            hidden = base(input_ids=enc.input_ids.to(device), attention_mask=enc.attention_mask.to(device))
        vec = _pool(hidden.last_hidden_state.float(), enc.attention_mask.to(device), pool).cpu()
        tokens = [ids[m.bool()].tolist() for ids, m in zip(enc.input_ids, enc.attention_mask)]
        yield np.arange(start, start + len(chunk)), vec[:, None, :], {"text": chunk, "tokens": tokens}


def has_text_tower(name: str, key: str = "vision.name") -> bool:
    """Whether the vision model called `name` is an image-text checkpoint with its own text tower (CLIP, SigLIP)."""
    from transformers import AutoConfig

    from frozenbridge.core.backbones.hub import load_pretrained
    from frozenbridge.core.backbones.vision import EMBEDDED

    if name in EMBEDDED:
        return False
    return getattr(load_pretrained(AutoConfig.from_pretrained, name, key), "text_config", None) is not None


class VisionTextTower:
    """The text tower of a CLIP or SigLIP checkpoint named by vision.name (frozen)."""

    def __init__(self, name: str, key: str = "vision.name"):
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        from frozenbridge.core.backbones.hub import freeze, load_pretrained, model_revision  # transformers: lazily

        config = load_pretrained(AutoConfig.from_pretrained, name, key)
        if getattr(config, "text_config", None) is None:
            raise FrozenbridgeError(f"retrieval.towers has vision_text but {key} = {name!r} is a "
                                    f"{config.model_type!r} model without a text tower; name a CLIP or SigLIP model")
        self.model = load_pretrained(AutoModel.from_pretrained, name, key)
        if not hasattr(self.model, "get_text_features"):
            raise FrozenbridgeError(f"{key} = {name!r}: {type(self.model).__name__} has no get_text_features")
        self.tokenizer = load_pretrained(AutoTokenizer.from_pretrained, name, key)
        self.name, self.family = name, config.model_type
        self.revision = model_revision(self.model, name)
        freeze(self.model, "vision model's text tower", name)

    def batches(self, texts: list[str], batch_size: int, device: torch.device):
        self.model.to(device)
        siglip = self.family.startswith("siglip")  # SigLIP was trained on text padded to its full length
        longest = self.model.config.text_config.max_position_embeddings
        for start in range(0, len(texts), batch_size):
            chunk = texts[start:start + batch_size]
            enc = self.tokenizer(chunk, return_tensors="pt", padding="max_length" if siglip else True,
                                 truncation=True, max_length=longest)
            with torch.no_grad():
                out = self.model.get_text_features(**{k: v.to(device) for k, v in enc.items()
                                                      if k in ("input_ids", "attention_mask")})
            out = getattr(out, "pooler_output", out)  # newer transformers return an output object
            tokens = [ids[m.bool()].tolist() for ids, m in zip(enc.input_ids, enc.get("attention_mask",
                                                                                       torch.ones_like(enc.input_ids)))]
            yield np.arange(start, start + len(chunk)), out.float().cpu()[:, None, :], {"text": chunk,
                                                                                          "tokens": tokens}


def write_text_features(path: Path, batches, total: int, meta: dict, desc: str) -> None:
    write_features(path, batches, total, "float32", {**meta, "tokens": 1, "texts": total}, desc, "text", EXTRA)


def read_text_features(path: str | Path, encoder: str, features: str) -> TextFeatures:
    """A text cache, refused when another text model or pooling made it."""
    ids, feats, meta = load_feature_tensor(path, "retrieval_embed")
    for field, want in (("encoder", encoder), ("features", features)):
        if meta.get(field) != want:
            raise FrozenbridgeError(f"{path}: texts were embedded with {field} = {meta.get(field)!r}, but params.yaml "
                                    f"asks for {want!r}; rerun `dvc repro retrieval_embed`")
    table = pq.read_table(path, columns=["text", "tokens"])
    return TextFeatures(table.column("text").to_pylist(), feats[:, 0].float(), table.column("tokens").to_pylist(),
                        {**meta, "path": str(path)})
