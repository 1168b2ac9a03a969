"""The only text the digits language model ever reads: "the digit is <word>", one character a token."""

from __future__ import annotations

import torch

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TEMPLATE = "the digit is "
BOS, EOS = 0, 1
VOCAB = ("<bos>", "<eos>", *sorted(set("".join(WORDS) + TEMPLATE)))
INDEX = {c: i for i, c in enumerate(VOCAB)}


def sentence(digit: int) -> str:
    return TEMPLATE + WORDS[digit]


def encode(text: str) -> list[int]:
    return [BOS] + [INDEX[c] for c in text] + [EOS]


LENGTH = max(len(encode(sentence(d))) for d in range(10))  # tokens of the longest sentence, <bos> and <eos> included


def captions() -> torch.Tensor:
    """(10, LENGTH) token ids of each digit's sentence, padded with <eos>."""
    rows = [encode(sentence(d)) for d in range(10)]
    return torch.tensor([r + [EOS] * (LENGTH - len(r)) for r in rows])


def decode(ids: list[int]) -> str:
    """The characters after <bos>, up to the first <eos>."""
    out = []
    for i in ids[1:] if ids and ids[0] == BOS else ids:
        if i == EOS:
            break
        out.append(VOCAB[i] if i > EOS else "")
    return "".join(out)


def well_formed(text: str) -> bool:
    """One of the ten sentences exactly."""
    return text.startswith(TEMPLATE) and text[len(TEMPLATE):] in WORDS


def digit_named(text: str) -> int | None:
    """The digit a caption's last word names, or None."""
    words = text.split()
    return WORDS.index(words[-1]) if words and words[-1] in WORDS else None
