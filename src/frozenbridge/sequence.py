"""Text and image tokens into one sequence, with labels on the target only.

    with a picture:  [bos] "Image:" <image tokens> "\\nCaption:" " an orange circle and a red square" <eos>
                     [bos] "Image:" <image tokens> "\\nQuestion: How many shapes are there? Answer:" " two" <eos>
    no picture:      [bos] "Caption:" ...   /   [bos] "Question: ... Answer:" ...

The picture and the prompt are context (label -100); the loss is on the target tokens, end-of-text included.
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


def caption_prompt() -> str:
    return "Caption:"


def question_prompt(question: str) -> str:
    return f"Question: {question} Answer:"


class Tokens:
    """Token ids of the pieces, cached: the same few prompts recur thousands of times."""

    def __init__(self, tokenizer):
        self.tok = tokenizer
        with_special = tokenizer("Image:").input_ids
        plain = tokenizer("Image:", add_special_tokens=False).input_ids
        # whatever the tokenizer adds in front (a BOS for Llama-style models; nothing for Qwen or SmolLM2)
        self.bos = with_special[: len(with_special) - len(plain)] if with_special[-len(plain):] == plain else []
        self.image_label = plain
        self.eos = tokenizer.eos_token_id
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.ids = lru_cache(maxsize=4096)(lambda text: tuple(tokenizer(text, add_special_tokens=False).input_ids))

    def pieces(self, item: Item, with_target: bool) -> tuple[list[int], list[int], list[int]]:
        """(before the image, after the image, target) ids."""
        if item.image is None:
            before, after = self.bos + list(self.ids(item.prompt)), []
        else:
            before, after = self.bos + self.image_label, list(self.ids("\n" + item.prompt))
        target = list(self.ids(" " + item.target)) + [self.eos] if with_target else []
        return before, after, target


@dataclass
class Batch:
    ids: torch.Tensor  # (B, L) token ids, pad where image tokens go
    image_mask: torch.Tensor  # (B, L) True where an image token goes
    attention_mask: torch.Tensor  # (B, L)
    labels: torch.Tensor  # (B, L) target ids, IGNORE elsewhere
    images: list[int]  # feature rows, in order, for rows that show a picture


def build(items: list[Item], tokens: Tokens, n_image: int, with_target: bool, left_pad: bool) -> Batch:
    rows = []
    for item in items:
        before, after, target = tokens.pieces(item, with_target)
        n = 0 if item.image is None else n_image
        seq = before + [tokens.pad] * n + after + target
        img = [False] * len(before) + [True] * n + [False] * (len(after) + len(target))
        lab = [IGNORE] * (len(seq) - len(target)) + target
        rows.append((seq, img, lab))
    length = max(len(r[0]) for r in rows)
    ids = torch.full((len(rows), length), tokens.pad, dtype=torch.long)
    image_mask = torch.zeros((len(rows), length), dtype=torch.bool)
    attention = torch.zeros((len(rows), length), dtype=torch.long)
    labels = torch.full((len(rows), length), IGNORE, dtype=torch.long)
    for i, (seq, img, lab) in enumerate(rows):
        span = slice(length - len(seq), length) if left_pad else slice(0, len(seq))
        ids[i, span] = torch.tensor(seq)
        image_mask[i, span] = torch.tensor(img)
        attention[i, span] = 1
        labels[i, span] = torch.tensor(lab)
    return Batch(ids, image_mask, attention, labels, [it.image for it in items if it.image is not None])


def embed(batch: Batch, text_embed: torch.Tensor, image_tokens: torch.Tensor | None) -> torch.Tensor:
    """Text embeddings with the image tokens scattered into their slots (autograd flows into image_tokens)."""
    if image_tokens is None or not batch.image_mask.any():
        return text_embed
    return text_embed.masked_scatter(batch.image_mask.unsqueeze(-1), image_tokens.to(text_embed.dtype))
