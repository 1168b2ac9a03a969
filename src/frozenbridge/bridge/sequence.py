"""Text and image tokens into one sequence, with labels on the target only.

    with a picture:  [bos] "Image:" <image tokens> "\\nCaption:" " an orange circle and a red square" <eos>
                     [bos] "Image:" <image tokens> "\\nQuestion: How many shapes are there? Answer:" " two" <eos>
    no picture:      [bos] "Caption:" ...   /   [bos] "Question: ... Answer:" ...

    several pictures: [bos] "Image:" <image tokens> " and Image:" <image tokens> "\nQuestion: ..." " ..." <eos>

Any item is a run of parts, text and pictures in any order (`Interleaved`); `Item`, the one-picture item every
study uses today, is the run ("Image:", picture, "\n" + prompt), or the prompt alone. The pictures and the prompt
are context (label -100); the loss is on the target tokens, end-of-text included.
Training batches are right-padded to their longest member; generation batches are left-padded so every row's
next token comes at the same position.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

IGNORE = -100


@dataclass(frozen=True)
class Item:
    """One training or evaluation item: whose picture to show (or none), the prompt, the target."""

    image: int | None  # row of the feature tensor holding the picture, or None for the no-picture condition
    prompt: str  # "Caption:" or "Question: ... Answer:"
    target: str  # the caption or answer, without a leading space

    def parts(self) -> tuple[str | int, ...]:
        return (self.prompt,) if self.image is None else (IMAGE_LABEL, self.image, "\n" + self.prompt)


@dataclass(frozen=True)
class Interleaved:
    """Text and pictures in any order, then the target: parts are strings (text) and ints (feature rows)."""

    pieces: tuple[str | int, ...]
    target: str

    def parts(self) -> tuple[str | int, ...]:
        return self.pieces


IMAGE_LABEL = "Image:"


class Tokens:
    """Token ids of the pieces, cached: the same few prompts recur thousands of times."""

    def __init__(self, tokenizer):
        self.tok = tokenizer
        with_special = tokenizer(IMAGE_LABEL).input_ids
        plain = tokenizer(IMAGE_LABEL, add_special_tokens=False).input_ids
        # whatever the tokenizer adds in front (a BOS for Llama-style models; nothing for Qwen or SmolLM2)
        self.bos = with_special[: len(with_special) - len(plain)] if with_special[-len(plain):] == plain else []
        self.eos = tokenizer.eos_token_id
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.ids = lru_cache(maxsize=4096)(lambda text: tuple(tokenizer(text, add_special_tokens=False).input_ids))

    def target(self, item, with_target: bool) -> list[int]:
        return list(self.ids(" " + item.target)) + [self.eos] if with_target else []


@dataclass
class Batch:
    ids: torch.Tensor  # (B, L) token ids, pad where image tokens go
    image_mask: torch.Tensor  # (B, L) True where an image token goes
    attention_mask: torch.Tensor  # (B, L)
    labels: torch.Tensor  # (B, L) target ids, IGNORE elsewhere
    images: list[int]  # feature rows of every picture shown, row by row and left to right within a row


def row(item: Item | Interleaved, tokens: Tokens, n_image: int, with_target: bool):
    """(ids, image slots, labels, pictures) of one item: each picture takes n_image slots where it stands."""
    seq, img, pictures = list(tokens.bos), [False] * len(tokens.bos), []
    for part in item.parts():
        if isinstance(part, str):
            ids = tokens.ids(part)
            seq += ids
            img += [False] * len(ids)
        else:
            seq += [tokens.pad] * n_image
            img += [True] * n_image
            pictures.append(part)
    target = tokens.target(item, with_target)
    labels = [IGNORE] * len(seq) + target
    return seq + target, img + [False] * len(target), labels, pictures


def build(items: list[Item | Interleaved], tokens: Tokens, n_image: int, with_target: bool,
          left_pad: bool) -> Batch:
    rows = [row(item, tokens, n_image, with_target) for item in items]
    length = max(len(r[0]) for r in rows)
    ids = torch.full((len(rows), length), tokens.pad, dtype=torch.long)
    image_mask = torch.zeros((len(rows), length), dtype=torch.bool)
    attention = torch.zeros((len(rows), length), dtype=torch.long)
    labels = torch.full((len(rows), length), IGNORE, dtype=torch.long)
    for i, (seq, img, lab, _) in enumerate(rows):
        span = slice(length - len(seq), length) if left_pad else slice(0, len(seq))
        ids[i, span] = torch.tensor(seq)
        image_mask[i, span] = torch.tensor(img)
        attention[i, span] = 1
        labels[i, span] = torch.tensor(lab)
    return Batch(ids, image_mask, attention, labels, [pic for r in rows for pic in r[3]])


def embed(batch: Batch, text_embed: torch.Tensor, image_tokens: torch.Tensor | None) -> torch.Tensor:
    """Text embeddings with the image tokens scattered into their slots (autograd flows into image_tokens)."""
    if image_tokens is None or not batch.image_mask.any():
        return text_embed
    return text_embed.masked_scatter(batch.image_mask.unsqueeze(-1), image_tokens.to(text_embed.dtype))
