"""A folder of the user's own pictures and questions, read and checked before any work: the audit's input.

It is the `datasets` imagefolder layout the one-token study reads for captions (onetoken/data/folder.py), extended
to questions. FOLDER/train/ and FOLDER/test/ each hold pictures and a metadata.jsonl, one JSON object a line, a
picture a line. Five lines to copy (each metadata.jsonl beside its pictures):

    {"file_name": "a.jpg", "text": "a green pear", "questions": [{"question": "What color?", "answer": "green"}]}
    {"file_name": "b.jpg", "questions": [{"question": "How many pears?", "answer": "2", "kind": "count"}]}
    {"file_name": "c.png", "text": "two red apples"}
    {"file_name": "d.jpg", "questions": [{"question": "What color?", "answer": "red", "kind": "color"}]}
    {"file_name": "e.jpg", "heldout": true, "questions": [{"question": "What color?", "answer": "red"}]}

(the first three in train/metadata.jsonl, the last two in test/metadata.jsonl). A row has:

    file_name   required: the picture's path from its split's folder (subfolders are fine, leaving it is not)
    text        optional: a caption (stage 1 trains on the training captions)
    questions   optional: a list of {"question": text, "answer": text, "kind": text}; kind is optional and says what
                the question needs (color, count, position...): the audit breaks its numbers down by it
    heldout     optional, test pictures only: true for a picture showing a combination never seen in training

Answers are short text, scored exactly after lower-casing and trimming (`normalize_answer`). Write numbers as text
("3"). The training split needs captions, questions or both; the test split needs questions.

Every problem is one line naming the file and the row (its 1-based line in metadata.jsonl), raised before any work,
and reading changes nothing in the folder: no folder, no train/ (a test set alone is refused) or no test/, no
metadata.jsonl, a line that is not a JSON object, a key that is not one of those above (a typo would otherwise drop
data silently), a row without file_name, a picture that is missing or cannot be read as an image, a question
without a non-empty answer, a value of the wrong type, heldout: true on a training picture (false is allowed).

Duplicates are refused: the same file_name twice in a split (questions for one picture go in its one row's list:
two rows would count that picture twice), and the same question twice on one picture (compared after lower-casing
and trimming: it would weigh twice, or contradict itself). A split's folder cannot be left, so no picture can sit
in both splits by name; pictures in a split's folder that no row names are left out, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from frozenbridge.core.controls import normalize
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.picture_folder import check_picture, json_rows, unlisted_pictures

log = logging.getLogger("frozenbridge.audit")
SPLITS = ("train", "test")
METADATA = "metadata.jsonl"
ROW_KEYS = ("file_name", "text", "questions", "heldout")
QUESTION_KEYS = ("question", "answer", "kind")
LAYOUT = "train/ and test/, each with its pictures and a metadata.jsonl"


def normalize_answer(text: str) -> str:
    """An answer as it is scored: lower-cased and trimmed, so "Red " and "red" match (core.controls.normalize)."""
    return normalize(text)


class Question(NamedTuple):
    question: str
    answer: str  # as written, trimmed; compare with normalize_answer
    kind: str | None  # what the question needs (color, count...), None when the row gives none


@dataclass(frozen=True)
class AuditPicture:
    file_name: str  # as the row wrote it
    path: Path
    row: int  # its 1-based line in metadata.jsonl, for messages about it later
    caption: str | None
    questions: tuple[Question, ...]
    heldout: bool  # a test picture showing a combination never seen in training


@dataclass(frozen=True)
class AuditSplit:
    name: str  # train or test
    metadata: Path
    pictures: tuple[AuditPicture, ...]
    unlisted: int = 0  # pictures in the folder that no row names (left out)

    @property
    def n_pictures(self) -> int:
        return len(self.pictures)

    @property
    def n_questions(self) -> int:
        return sum(len(p.questions) for p in self.pictures)

    @property
    def n_captions(self) -> int:
        return sum(p.caption is not None for p in self.pictures)

    @property
    def n_heldout(self) -> int:
        return sum(p.heldout for p in self.pictures)

    @property
    def kind_counts(self) -> dict[str, int]:
        """Questions per named kind, kinds sorted; questions without a kind are `n_unkinded`."""
        kinds = [q.kind for p in self.pictures for q in p.questions if q.kind is not None]
        return {k: kinds.count(k) for k in sorted(set(kinds))}

    @property
    def n_unkinded(self) -> int:
        return sum(q.kind is None for p in self.pictures for q in p.questions)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.kind_counts)

    @property
    def has_captions(self) -> bool:
        return self.n_captions > 0

    @property
    def has_questions(self) -> bool:
        return self.n_questions > 0

    @property
    def has_heldout(self) -> bool:
        return self.n_heldout > 0

    def summary(self) -> dict:
        return {"pictures": self.n_pictures, "questions": self.n_questions, "captions": self.n_captions,
                "heldout": self.n_heldout, "kinds": self.kind_counts, "unkinded": self.n_unkinded,
                "unlisted": self.unlisted}


@dataclass(frozen=True)
class AuditFolder:
    root: Path
    train: AuditSplit
    test: AuditSplit

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every named kind of either split, sorted."""
        return tuple(sorted(set(self.train.kinds) | set(self.test.kinds)))

    @property
    def untrained_kinds(self) -> tuple[str, ...]:
        """Kinds the test asks that no training question has: the page should say so beside their scores."""
        return tuple(k for k in self.test.kinds if k not in self.train.kinds)

    @property
    def has_captions(self) -> bool:
        """The training pictures have captions, so stage 1 can train on them (test captions are never trained on)."""
        return self.train.has_captions

    @property
    def has_heldout(self) -> bool:
        """Some test pictures are marked heldout: the page can set seen against held-out."""
        return self.test.has_heldout

    def summary(self) -> dict:
        """Every count, JSON-ready, for the page's JSON."""
        return {"folder": str(self.root), "train": self.train.summary(), "test": self.test.summary(),
                "kinds": list(self.kinds), "untrained_kinds": list(self.untrained_kinds),
                "has_captions": self.has_captions, "has_heldout": self.has_heldout}


def read_audit_folder(path: str | Path) -> AuditFolder:
    """The folder's two splits, every row and picture checked (see the module docstring); nothing is written."""
    root = Path(path)
    if not root.is_dir():
        raise FrozenbridgeError(f"{root}: no such folder (expected {LAYOUT})")
    for split in SPLITS:
        if not (root / split).is_dir():
            alone = "; a test set needs a training set beside it" if (root / "test").is_dir() else ""
            raise FrozenbridgeError(f"{root}: no {split}/ folder{alone} (expected {LAYOUT})")
    train, test = (_read_split(root / split, split) for split in SPLITS)
    if not (train.has_captions or train.has_questions):
        raise FrozenbridgeError(f"{train.metadata}: no training picture has a caption (text) or questions; "
                                "the audit trains on one or both")
    if not test.has_questions:
        raise FrozenbridgeError(f"{test.metadata}: no test picture has questions; the audit scores the answers "
                                "to the test questions")
    return AuditFolder(root, train, test)


def _read_split(directory: Path, split: str) -> AuditSplit:
    metadata = directory / METADATA
    if not metadata.is_file():
        csv = (directory / "metadata.csv").exists()
        also = " (questions need JSON lines: metadata.csv is not read here)" if csv else ""
        raise FrozenbridgeError(f"{directory}: no {METADATA}{also}; write one JSON object a line: file_name, and "
                                "text, questions or both")
    try:
        rows = json_rows(metadata)  # one line naming the row for a line that is not a JSON object
    except UnicodeDecodeError as err:
        raise FrozenbridgeError(f"{metadata}: not UTF-8 text (byte {err.start}); save it as UTF-8") from None
    listed: dict[str, int] = {}  # normalized file_name -> its line
    pictures = tuple(_picture(obj, where, directory, split, listed) for _, _, obj, where in rows)
    if not pictures:
        raise FrozenbridgeError(f"{metadata}: names no pictures; write one JSON object a line: file_name, and "
                                "text, questions or both")
    unlisted = unlisted_pictures(directory, [p.path for p in pictures])
    if unlisted:
        log.warning("%s: %d pictures are named by no row of %s and are left out", directory, unlisted, METADATA)
    return AuditSplit(split, metadata, pictures, unlisted)


def _picture(obj: dict, where: str, directory: Path, split: str, listed: dict[str, int]) -> AuditPicture:
    row = int(where.rpartition(":")[2])
    _known_keys(obj, ROW_KEYS, f"{where}: unknown", "a row may have")
    file_name = obj.get("file_name")
    if file_name is None:
        raise FrozenbridgeError(f"{where}: no file_name (each row names one picture by its path from {split}/)")
    if not isinstance(file_name, str) or not file_name.strip():
        raise FrozenbridgeError(f"{where}: file_name must be a picture's path from {split}/, not {_shown(file_name)}")
    name = os.path.normpath(file_name)
    if os.path.isabs(name) or name == os.pardir or name.startswith(os.pardir + os.sep):
        raise FrozenbridgeError(f"{where}: file_name {_shown(file_name)} leaves {split}/; give the picture's path "
                                f"from {directory}")
    if name in listed:
        raise FrozenbridgeError(f"{where}: {_shown(file_name)} is already listed on line {listed[name]}; give each "
                                "picture one row, with all its questions in that row's list")
    listed[name] = row
    caption = obj.get("text")
    if caption is not None or "text" in obj:
        if not isinstance(caption, str) or not caption.strip():
            raise FrozenbridgeError(f"{where}: text must be a caption (non-empty text), not {_shown(caption)}")
        caption = caption.strip()
    questions = _questions(obj.get("questions", []), where)
    heldout = obj.get("heldout", False)
    if not isinstance(heldout, bool):
        raise FrozenbridgeError(f"{where}: heldout must be true or false, not {_shown(heldout)}")
    if heldout and split == "train":
        raise FrozenbridgeError(f"{where}: heldout on a training picture; heldout marks a test picture showing a "
                                "combination never seen in training (move it to test/ or drop the flag)")
    return AuditPicture(file_name, _readable(directory / name, where), row, caption, questions, heldout)


def _questions(value: object, where: str) -> tuple[Question, ...]:
    if not isinstance(value, list):
        raise FrozenbridgeError(f'{where}: questions must be a list of {{"question": ..., "answer": ...}} objects, '
                                f"not {_shown(value)}")
    out: list[Question] = []
    asked: dict[str, int] = {}
    for i, q in enumerate(value, 1):
        label = f"{where}: question {i}"
        if not isinstance(q, dict):
            raise FrozenbridgeError(f'{label} must be an object such as {{"question": "What color?", "answer": '
                                    f'"red"}}, not {_shown(q)}')
        _known_keys(q, QUESTION_KEYS, f"{label} has unknown", "a question may have")
        text = q.get("question")
        if text is None:
            raise FrozenbridgeError(f"{label} has no question")
        if not isinstance(text, str) or not text.strip():
            raise FrozenbridgeError(f"{label}: question must be non-empty text, not {_shown(text)}")
        label = f"{label} ({_shown(text.strip())})"
        if "answer" not in q:
            raise FrozenbridgeError(f"{label} has no answer; every question needs its short right answer")
        answer = q["answer"]
        if not isinstance(answer, str):
            raise FrozenbridgeError(f'{label}: answer must be text such as "red" or "3", not {_shown(answer)}')
        if not normalize_answer(answer):
            raise FrozenbridgeError(f"{label}: answer is empty; give its short right answer")
        kind = q.get("kind")
        if kind is not None or "kind" in q:
            if not isinstance(kind, str) or not kind.strip():
                raise FrozenbridgeError(f'{label}: kind must be text such as "color" or "count", not {_shown(kind)}')
            kind = kind.strip()
        key = normalize_answer(text)
        if key in asked:
            raise FrozenbridgeError(f"{label} repeats question {asked[key]}; ask each question once a picture")
        asked[key] = i
        out.append(Question(text.strip(), answer.strip(), kind))
    return tuple(out)


def _known_keys(obj: dict, allowed: tuple[str, ...], prefix: str, may: str) -> None:
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        keys = ", ".join(_shown(k) for k in unknown)
        raise FrozenbridgeError(f"{prefix} key{'s' if len(unknown) > 1 else ''} {keys}; {may} "
                                f"{', '.join(allowed[:-1])} and {allowed[-1]}")


def _readable(path: Path, where: str) -> Path:
    """The one-token folder's picture check (Pillow's verify: the file is parsed, its pixels are not decoded), its
    message led by the row."""
    try:
        return check_picture(path, Path(where))  # a missing picture: "<where>: names 'a.png' but ... does not exist"
    except FrozenbridgeError as err:
        message = str(err)
        raise FrozenbridgeError(message if message.startswith(where) else f"{where}: {message}") from None


def _shown(value: object, limit: int = 60) -> str:
    """A value as the user wrote it in JSON, cut short: one line whatever it holds."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."
