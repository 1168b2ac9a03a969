"""The trained run answers every test question four times: with its own picture, a blank picture, another test
picture and no picture (the prompt alone). Each distinct (picture, prompt) is generated once, greedily.

The other picture of test picture i is the test picture half the list away (i + n//2, the next one along where
that is i itself), so every test picture is shown as another's once; a test set of one picture borrows the first
training picture. Answers are scored later (evaluation.checks); here they are only written down, one record a test
question: its picture, file, question, kind, true answer, heldout flag, and what was said under each condition.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from frozenbridge.audit.data.features import AuditFeatures
from frozenbridge.audit.data.folder import AuditFolder
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.sequence import Item

CONDITIONS = ("right", "blank", "other", "none")


def other_pictures(n: int) -> list[int]:
    """For each of n test pictures, the one shown as 'another picture' (n = 1: -1, the borrowed training picture)."""
    if n == 1:
        return [-1]
    return [(i + n // 2) % n if (i + n // 2) % n != i else (i + 1) % n for i in range(n)]


def answer_tokens(vlm: VLM, folder: AuditFolder, setting: int | None) -> int:
    """The new tokens an answer may take: the setting, or the longest test answer's tokens plus two."""
    if setting is not None:
        return setting
    return 2 + max(len(vlm.tokens.ids(" " + q.answer)) for p in folder.test.pictures for q in p.questions)


def generate_once(vlm: VLM, keys: list[tuple[int | None, str]], feats: torch.Tensor, batch_size: int,
                  max_new: int) -> dict[tuple[int | None, str], str]:
    """Every distinct (feature row or None, prompt) generated once; batches hold prompts of one length, so they pad
    little."""
    unique = sorted(set(keys), key=lambda k: (k[0] is None, len(vlm.tokens.ids(k[1])), k[1], -1 if k[0] is None
                                              else k[0]))
    said: dict = {}
    for i in tqdm(range(0, len(unique), batch_size), desc="audit answers", unit="batch"):
        chunk = unique[i:i + batch_size]
        said.update(zip(chunk, vlm.generate([Item(row, prompt, "") for row, prompt in chunk], feats, max_new),
                        strict=True))
    return said


def answer_records(vlm: VLM, folder: AuditFolder, feats: AuditFeatures, ask, batch_size: int,
                   max_new: int) -> list[dict]:
    """One record a test question, in folder order (`ask` turns a question into its prompt)."""
    pictures = folder.test.pictures
    n = len(pictures)
    blank_row, borrowed_row = n, n + 1
    rows = torch.cat([feats.test, feats.blank.to(feats.test.dtype), feats.train[:1].to(feats.test.dtype)])
    others = [borrowed_row if o < 0 else o for o in other_pictures(n)]
    shown = {"right": lambda i: i, "blank": lambda i: blank_row, "other": lambda i: others[i], "none": lambda i: None}
    asked = [(i, q) for i, p in enumerate(pictures) for q in p.questions]
    keys = [(shown[c](i), ask(q.question)) for i, q in asked for c in CONDITIONS]
    vlm.connector.eval()
    said = generate_once(vlm, keys, rows, batch_size, max_new)
    return [{"picture": i, "file_name": pictures[i].file_name, "question": q.question, "kind": q.kind,
             "answer": q.answer, "heldout": pictures[i].heldout,
             "said": {c: said[(shown[c](i), ask(q.question))] for c in CONDITIONS}} for i, q in asked]
