"""A trained run answers every test question under the four conditions the shapes study uses (core.controls): its own
picture, a blank picture, the wrong picture and none, each distinct (picture, prompt) generated once (bridge.ask).

The wrong picture is drawn as the study draws it, among like questions: the test questions on the same side (seen, or
marked held-out) and of the same kind (questions with no kind form one group), the picture of the question half the
group's list away. So a held-out question is shown another held-out picture, as in the study, whose answer it may
share (a right answer there is one the two scenes share). Where a group's questions all ask about one picture, the
side's questions are the group, then every test question, and a test set of one picture borrows the first training
picture. Answers are scored later (evaluation.checks); here they are written down, one record a test question and
replicate: the replicate, its picture, file, question, kind, true answer, heldout flag, the picture shown as the wrong
one, and what was said under each condition.
"""

from __future__ import annotations

import torch

from frozenbridge.audit.data.features import AuditFeatures
from frozenbridge.audit.data.folder import AuditFolder
from frozenbridge.bridge.ask import answer
from frozenbridge.bridge.model import VLM
from frozenbridge.core.controls import CONDITIONS, Asked, wrong_pictures

def wrong_for_each(folder: AuditFolder) -> list[int]:
    """Per test question in folder order, the test picture shown as the wrong one (-1: the borrowed training
    picture): within its side and kind, else its side, else every test question."""
    asked = [(i, bool(p.heldout), q.kind) for i, p in enumerate(folder.test.pictures) for q in p.questions]
    own = [pic for pic, _, _ in asked]
    out = [-1] * len(asked)
    for key in (lambda a: (a[1], a[2]), lambda a: a[1], lambda a: 0):  # group, then side, then all
        groups: dict = {}
        for n, a in enumerate(asked):
            groups.setdefault(key(a), []).append(n)
        for members in groups.values():
            for n, wrong in zip(members, wrong_pictures([own[m] for m in members]), strict=True):
                if out[n] == -1 and wrong != own[n]:
                    out[n] = wrong
    return out


def answer_tokens(vlm: VLM, folder: AuditFolder, setting: int | None) -> int:
    """The new tokens an answer may take: the setting, or the longest test answer's tokens plus two."""
    if setting is not None:
        return setting
    return 2 + max(len(vlm.tokens.ids(" " + q.answer)) for p in folder.test.pictures for q in p.questions)


def answer_records(vlm: VLM, folder: AuditFolder, feats: AuditFeatures, ask, batch_size: int, max_new: int,
                   replicate: int = 0) -> list[dict]:
    """One record a test question, in folder order (`ask` turns a question into its prompt)."""
    pictures = folder.test.pictures
    blank_row, borrowed_row = len(pictures), len(pictures) + 1
    rows = torch.cat([feats.test, feats.blank.to(feats.test.dtype), feats.train[:1].to(feats.test.dtype)])
    questions = [(i, q) for i, p in enumerate(pictures) for q in p.questions]
    wrong = wrong_for_each(folder)
    items = [Asked(i, ask(q.question), q.answer, borrowed_row if w < 0 else w)
             for (i, q), w in zip(questions, wrong, strict=True)]
    said = answer(vlm, items, rows, blank_row, batch_size, max_new, f"audit answers, replicate {replicate}")
    return [{"replicate": replicate, "picture": i, "file_name": pictures[i].file_name, "question": q.question,
             "kind": q.kind, "answer": q.answer, "heldout": pictures[i].heldout,
             "wrong_picture": None if w < 0 else pictures[w].file_name,
             "said": {c: said[c][n] for c in CONDITIONS}} for n, ((i, q), w) in enumerate(zip(questions, wrong))]
