"""Text and image tokens into one sequence, with labels on the target only.

    with a picture:  [bos] "Image:" <image tokens> "\\nCaption:" " an orange circle and a red square" <eos>
                     [bos] "Image:" <image tokens> "\\nQuestion: How many shapes are there? Answer:" " two" <eos>
    no picture:      [bos] "Caption:" ...   /   [bos] "Question: ... Answer:" ...

    several pictures: [bos] "Image:" <image tokens> " and Image:" <image tokens> "\nQuestion: ..." " ..." <eos>

    one picture, its questions packed (`Packed`):
                     [bos] "Image:" <image tokens> | "\nQuestion: q1 Answer:" " a1" <eos> | "\nQuestion: q2 ..." ...

Any item is a run of parts, text and pictures in any order (`Interleaved`); `Item`, the one-picture item every
study uses today, is the run ("Image:", picture, "\n" + prompt), or the prompt alone. The pictures and the prompt
are context (label -100); the loss is on the target tokens, end-of-text included.
A `Packed` row holds a picture once and then each of its questions as a segment that attends only to the picture
and to itself, at the positions it would have alone: the tokens, positions and visible context of every target
token are those of the question unpacked, so its loss and gradients are the same (the picture's tokens are run
once instead of once a question). Such a batch carries a 4D attention mask and position ids.
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


@dataclass(frozen=True)
class Packed:
    """One picture and several (prompt, target) pairs, trained as one row: the same loss as `unpack()`'s items."""

    image: int
    questions: tuple[tuple[str, str], ...]  # (prompt, target) pairs, e.g. ("Question: ... Answer:", "two")

    def unpack(self) -> list[Item]:
        return [Item(self.image, prompt, target) for prompt, target in self.questions]


def unpack(items: list) -> list:
    """Packed rows -> their one-question items, in order; other items unchanged."""
    return [one for item in items for one in (item.unpack() if isinstance(item, Packed) else [item])]


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
    positions: torch.Tensor | None = None  # (B, L) position ids, only when a row is packed
    segments: torch.Tensor | None = None  # (B, L) 0 = shared context (the picture), k = the row's k-th question
    row_pictures: list[list[int]] | None = None  # the feature rows of each batch row's pictures, in order

    def attention_4d(self, window: int | None = None) -> torch.Tensor:
        """(B, 1, L, L) True where query i may see key j: causal, within the row, and a question sees only the
        shared context and itself; with a sliding `window`, only keys fewer than `window` positions before the
        query's (positions, not columns: what the question alone sees). Padding positions see themselves only (no
        row of the mask is empty)."""
        seg, valid = self.segments, self.attention_mask.bool()
        n = seg.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        same = (seg[:, None, :] == 0) | (seg[:, None, :] == seg[:, :, None])
        allowed = causal & same & valid[:, None, :] & valid[:, :, None]
        if window is not None:
            allowed &= (self.positions[:, :, None] - self.positions[:, None, :]) < window
        return (allowed | torch.eye(n, dtype=torch.bool)).unsqueeze(1)


def packed_row(item: Packed, tokens: Tokens, n_image: int):
    """(ids, image slots, labels, pictures, positions, segments) of a packed row: [bos] "Image:" picture, then each
    question's "\n" + prompt, target, end-of-text, its positions continuing from the picture's as if alone."""
    seq = list(tokens.bos) + list(tokens.ids(IMAGE_LABEL)) + [tokens.pad] * n_image
    img = [False] * (len(seq) - n_image) + [True] * n_image
    prefix, labels = len(seq), [IGNORE] * len(seq)
    positions, segments = list(range(prefix)), [0] * prefix
    for k, (prompt, target) in enumerate(item.questions, start=1):
        context = list(tokens.ids("\n" + prompt))
        answer = tokens.target(Item(item.image, prompt, target), True)
        seq += context + answer
        img += [False] * (len(context) + len(answer))
        labels += [IGNORE] * len(context) + answer
        positions += range(prefix, prefix + len(context) + len(answer))
        segments += [k] * (len(context) + len(answer))
    return seq, img, labels, [item.image], positions, segments


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


def build(items: list, tokens: Tokens, n_image: int, with_target: bool, left_pad: bool) -> Batch:
    """One batch of items (Item, Interleaved or, for training, Packed); position ids and segments are set only when a
    row is packed, so batches without one run exactly as before (a 2D padding mask, positions 0..L-1)."""
    rows = []
    for item in items:
        if isinstance(item, Packed):
            if left_pad or not with_target:
                raise ValueError("packed rows are for training batches (right-padded, with targets)")
            rows.append(packed_row(item, tokens, n_image))
        else:
            seq, img, lab, pics = row(item, tokens, n_image, with_target)
            rows.append((seq, img, lab, pics, range(len(seq)), [0] * len(seq)))
    length = max(len(r[0]) for r in rows)
    ids = torch.full((len(rows), length), tokens.pad, dtype=torch.long)
    image_mask = torch.zeros((len(rows), length), dtype=torch.bool)
    attention = torch.zeros((len(rows), length), dtype=torch.long)
    labels = torch.full((len(rows), length), IGNORE, dtype=torch.long)
    positions = torch.zeros((len(rows), length), dtype=torch.long)
    segments = torch.zeros((len(rows), length), dtype=torch.long)
    for i, (seq, img, lab, _, pos, seg) in enumerate(rows):
        span = slice(length - len(seq), length) if left_pad else slice(0, len(seq))
        ids[i, span] = torch.tensor(seq)
        image_mask[i, span] = torch.tensor(img)
        attention[i, span] = 1
        labels[i, span] = torch.tensor(lab)
        positions[i, span] = torch.tensor(list(pos))
        segments[i, span] = torch.tensor(seg)
    packed = any(isinstance(item, Packed) for item in items)
    return Batch(ids, image_mask, attention, labels, [pic for r in rows for pic in r[3]],
                 positions if packed else None, segments if packed else None, [list(r[3]) for r in rows])


def embed(batch: Batch, text_embed: torch.Tensor, image_tokens: torch.Tensor | None) -> torch.Tensor:
    """Text embeddings with the image tokens scattered into their slots (autograd flows into image_tokens)."""
    if image_tokens is None or not batch.image_mask.any():
        return text_embed
    return text_embed.masked_scatter(batch.image_mask.unsqueeze(-1), image_tokens.to(text_embed.dtype))
