"""The audit's folder: the example reads back with its counts, kinds and held-out flags, the module docstring's
example is a valid folder, and every bad folder is one line naming the file and the row, with nothing changed."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from PIL import Image

from frozenbridge.audit.data import folder as audit_folder
from frozenbridge.audit.data.example import write_example_folder
from frozenbridge.audit.data.folder import Question, normalize_answer, read_audit_folder
from frozenbridge.core.errors import FrozenbridgeError


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every path under root: a file's bytes and mtime, a folder as None."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def rows(root: Path, split: str) -> list[str]:
    return (root / split / "metadata.jsonl").read_text().splitlines()


def set_row(root: Path, split: str, line: int, row: dict | str) -> None:
    """Line `line` (1-based) of a split's metadata.jsonl replaced, or appended when it is one past the end."""
    lines = rows(root, split)
    text = row if isinstance(row, str) else json.dumps(row)
    lines[line - 1:line] = [text]
    (root / split / "metadata.jsonl").write_text("\n".join(lines) + "\n")


def cut_short(path: Path) -> None:
    """The picture's file cut in half, as an interrupted copy leaves it: its header reads, its data does not."""
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


def example(tmp_path: Path) -> Path:
    return write_example_folder(tmp_path / "pictures")


def test_the_example_folder_reads_back_with_its_counts_kinds_and_heldout_flags(tmp_path):
    folder = read_audit_folder(example(tmp_path))
    assert [p.file_name for p in folder.train.pictures] == [f"pic{i:02d}.png" for i in range(1, 13)]
    assert [p.file_name for p in folder.test.pictures] == [f"pic{i:02d}.png" for i in range(1, 7)]
    assert (folder.train.n_questions, folder.test.n_questions) == (28, 14)
    assert folder.train.kind_counts == {"color": 12, "count": 8, "shape": 8}
    assert folder.test.kind_counts == {"color": 6, "count": 4, "shape": 4}
    assert folder.kinds == ("color", "count", "shape") and folder.untrained_kinds == ()
    assert [p.file_name for p in folder.test.pictures if p.heldout] == ["pic05.png", "pic06.png"]
    assert not any(p.heldout for p in folder.train.pictures)
    assert folder.has_captions and folder.has_heldout
    first = folder.test.pictures[0]
    assert first.path == tmp_path / "pictures" / "test" / "pic01.png" and first.row == 1
    assert first.caption == "two green circles"
    assert first.questions == (Question("What color are the shapes?", "green", "color"),
                               Question("How many shapes are there?", "2", "count"),
                               Question("What shape are they?", "circle", "shape"))
    # the held-out pictures show the two color-shape pairs no training picture shows
    held = {p.caption.split(" ", 1)[1].rstrip("s") for p in folder.test.pictures if p.heldout}
    assert held == {"red triangle", "blue circle"}
    assert not any(pair in p.caption for p in folder.train.pictures for pair in held)
    with Image.open(first.path) as im:
        assert (im.size, im.getpixel((0, 0)), im.getpixel((17, 32))) == ((64, 64), (255, 255, 255), (40, 160, 70))
    assert folder.summary() == {
        "folder": str(tmp_path / "pictures"), "kinds": ["color", "count", "shape"], "untrained_kinds": [],
        "has_captions": True, "has_heldout": True,
        "train": {"pictures": 12, "questions": 28, "captions": 12, "heldout": 0, "unkinded": 0, "unlisted": 0,
                  "kinds": {"color": 12, "count": 8, "shape": 8}},
        "test": {"pictures": 6, "questions": 14, "captions": 6, "heldout": 2, "unkinded": 0, "unlisted": 0,
                 "kinds": {"color": 6, "count": 4, "shape": 4}}}


def test_the_example_is_the_same_bytes_every_time_and_is_never_written_over_a_folder(tmp_path):
    a, b = write_example_folder(tmp_path / "a"), write_example_folder(tmp_path / "b")
    assert len(snapshot(a)) == 2 + 2 + 12 + 6
    assert {k: v[0] for k, v in snapshot(a).items() if v} == {k: v[0] for k, v in snapshot(b).items() if v}
    before = snapshot(a)
    with pytest.raises(FrozenbridgeError) as err:
        write_example_folder(a)
    assert str(err.value) == f"{a}: already exists; the example folder is written to a new or empty folder"
    assert snapshot(a) == before
    (tmp_path / "empty").mkdir()
    assert read_audit_folder(write_example_folder(tmp_path / "empty")).test.n_heldout == 2


def test_answers_are_compared_lower_cased_and_trimmed():
    assert normalize_answer("  Red \n") == "red"
    assert normalize_answer("Two Cats") == "two cats"
    assert normalize_answer("a  b") == "a  b"  # trimmed at the ends only: the inside is scored as written
    assert normalize_answer("RED") == normalize_answer(" red")


def docstring_rows() -> list[dict]:
    return [json.loads(line) for line in audit_folder.__doc__.splitlines() if line.startswith('    {"file_name"')]


def test_the_docstring_example_is_a_folder_that_reads(tmp_path):
    """The five lines a user copies: three training rows, then two test rows (kinds optional)."""
    examples = docstring_rows()
    assert len(examples) == 5
    for split, part in (("train", examples[:3]), ("test", examples[3:])):
        (tmp_path / split).mkdir()
        for row in part:
            Image.new("RGB", (8, 8), "red").save(tmp_path / split / row["file_name"])
        (tmp_path / split / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    folder = read_audit_folder(tmp_path)
    assert (folder.train.n_pictures, folder.test.n_pictures) == (3, 2)
    assert (folder.train.n_captions, folder.train.n_questions, folder.train.n_unkinded) == (2, 2, 1)
    assert folder.train.kind_counts == {"count": 1} and folder.test.kind_counts == {"color": 1}
    assert folder.train.pictures[1].questions == (Question("How many pears?", "2", "count"),)
    assert folder.train.pictures[1].caption is None and folder.test.pictures[1].questions[0].kind is None
    assert [p.heldout for p in folder.test.pictures] == [False, True]
    assert folder.untrained_kinds == ("color",)


def test_the_readme_shows_the_same_five_lines():
    """The README's example under "Your own pictures and questions" is the docstring's, which the test above reads."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("## Your own pictures and questions", 1)[1].split("```", 2)[1]
    assert [json.loads(line) for line in block.strip().splitlines()] == docstring_rows()


def test_questions_only_subfolders_and_unlisted_pictures(tmp_path, caplog):
    root = example(tmp_path)
    (root / "train" / "more").mkdir()
    shutil.copy(root / "train" / "pic01.png", root / "train" / "more" / "extra.png")
    shutil.copy(root / "train" / "pic01.png", root / "train" / "stray.png")
    lines = [json.loads(line) for line in rows(root, "train")]
    lines = [{k: v for k, v in r.items() if k != "text"} for r in lines]  # questions only
    lines[0]["heldout"] = False  # allowed on a training picture: only true is refused there
    lines.append({"file_name": "more/extra.png", "questions": [{"question": "How many?", "answer": " Two "}]})
    (root / "train" / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    with caplog.at_level(logging.WARNING, logger="frozenbridge.audit"):
        folder = read_audit_folder(root)
    assert not folder.has_captions and folder.test.has_captions
    assert folder.train.n_pictures == 13 and folder.train.n_unkinded == 1 and folder.train.unlisted == 1
    assert folder.train.pictures[-1].questions == (Question("How many?", "Two", None),)
    assert folder.train.pictures[-1].path == root / "train" / "more" / "extra.png"
    assert not folder.train.pictures[0].heldout and folder.train.pictures[0].caption is None
    assert [r.getMessage() for r in caplog.records] == [
        f"{root / 'train'}: 1 pictures are named by no row of metadata.jsonl and are left out"]


Q = {"question": "What color?", "answer": "red", "kind": "color"}
LAYOUT = "train/ and test/, each with its pictures and a metadata.jsonl"
WRITE = "write one JSON object a line: file_name, and text, questions or both"

# (case, what is done to the example folder, the one line: ROOT, TRAIN and TEST stand for the folder and the two
# metadata.jsonl paths)
BAD = [
    ("no train folder", lambda r: shutil.rmtree(r / "train"),
     f"ROOT: no train/ folder; a test set needs a training set beside it (expected {LAYOUT})"),
    ("no test folder", lambda r: shutil.rmtree(r / "test"), f"ROOT: no test/ folder (expected {LAYOUT})"),
    ("neither folder", lambda r: [shutil.rmtree(r / s) for s in ("train", "test")],
     f"ROOT: no train/ folder (expected {LAYOUT})"),
    ("no metadata", lambda r: (r / "test" / "metadata.jsonl").unlink(), f"ROOT/test: no metadata.jsonl; {WRITE}"),
    ("a csv instead", lambda r: (r / "train" / "metadata.jsonl").rename(r / "train" / "metadata.csv"),
     f"ROOT/train: no metadata.jsonl (questions need JSON lines: metadata.csv is not read here); {WRITE}"),
    ("empty metadata", lambda r: (r / "test" / "metadata.jsonl").write_text("\n"), f"TEST: names no pictures; {WRITE}"),
    ("not JSON", lambda r: set_row(r, "train", 3, "pic03.png"), "TRAIN:3: not a JSON object (Expecting value)"),
    ("not an object", lambda r: set_row(r, "test", 2, '["pic02.png"]'), "TEST:2: not a JSON object"),
    ("no file_name", lambda r: set_row(r, "train", 13, {"text": "a cat"}),
     "TRAIN:13: no file_name (each row names one picture by its path from train/)"),
    ("file_name not text", lambda r: set_row(r, "test", 1, {"file_name": 7, "questions": [Q]}),
     "TEST:1: file_name must be a picture's path from test/, not 7"),
    ("file_name leaves the split", lambda r: set_row(r, "test", 3, {"file_name": "../train/pic01.png",
                                                                     "questions": [Q]}),
     'TEST:3: file_name "../train/pic01.png" leaves test/; give the picture\'s path from ROOT/test'),
    ("the same picture twice", lambda r: set_row(r, "train", 13, {"file_name": "./pic04.png", "text": "a cat"}),
     'TRAIN:13: "./pic04.png" is already listed on line 4; give each picture one row, with all its questions in '
     "that row's list"),
    ("missing picture", lambda r: set_row(r, "train", 5, {"file_name": "gone.png", "text": "a cat"}),
     "TRAIN:5: names 'gone.png' but ROOT/train/gone.png does not exist"),
    ("not a picture", lambda r: (r / "test" / "pic02.png").write_bytes(b"not a picture"),
     "TEST:2: ROOT/test/pic02.png: not a picture this can read (UnidentifiedImageError); use PNG, JPEG or another "
     "format Pillow opens"),
    ("a cut-off picture", lambda r: cut_short(r / "train" / "pic07.png"),
     "TRAIN:7: ROOT/train/pic07.png: not a picture this can read (OSError); use PNG, JPEG or another format "
     "Pillow opens"),
    ("unknown row key", lambda r: set_row(r, "test", 4, {"file_name": "pic04.png", "heldOut": True, "qs": []}),
     'TEST:4: unknown keys "heldOut", "qs"; a row may have file_name, text, questions and heldout'),
    ("text not text", lambda r: set_row(r, "train", 2, {"file_name": "pic02.png", "text": ["a", "b"]}),
     'TRAIN:2: text must be a caption (non-empty text), not ["a", "b"]'),
    ("questions not a list", lambda r: set_row(r, "test", 1, {"file_name": "pic01.png", "questions": "What?"}),
     'TEST:1: questions must be a list of {"question": ..., "answer": ...} objects, not "What?"'),
    ("a question not an object", lambda r: set_row(r, "test", 1, {"file_name": "pic01.png", "questions": ["red"]}),
     'TEST:1: question 1 must be an object such as {"question": "What color?", "answer": "red"}, not "red"'),
    ("unknown question key", lambda r: set_row(r, "test", 6, {"file_name": "pic06.png", "questions": [
        Q, {"question": "How many?", "anwser": "2"}]}),
     'TEST:6: question 2 has unknown key "anwser"; a question may have question, answer and kind'),
    ("no question", lambda r: set_row(r, "train", 1, {"file_name": "pic01.png", "questions": [{"answer": "2"}]}),
     "TRAIN:1: question 1 has no question"),
    ("question not text", lambda r: set_row(r, "train", 1, {"file_name": "pic01.png", "questions": [
        {"question": 5, "answer": "red"}]}),
     "TRAIN:1: question 1: question must be non-empty text, not 5"),
    ("no answer", lambda r: set_row(r, "test", 3, {"file_name": "pic03.png", "questions": [
        Q, Q | {"question": " How many? "}, {"question": "What shape?", "kind": "shape"}]}),
     'TEST:3: question 3 ("What shape?") has no answer; every question needs its short right answer'),
    ("empty answer", lambda r: set_row(r, "test", 3, {"file_name": "pic03.png", "questions": [Q | {"answer": " "}]}),
     'TEST:3: question 1 ("What color?"): answer is empty; give its short right answer'),
    ("answer a number", lambda r: set_row(r, "train", 8, {"file_name": "pic08.png", "questions": [
        {"question": "How many?", "answer": 3}]}),
     'TRAIN:8: question 1 ("How many?"): answer must be text such as "red" or "3", not 3'),
    ("kind not text", lambda r: set_row(r, "train", 8, {"file_name": "pic08.png", "questions": [Q | {"kind": ""}]}),
     'TRAIN:8: question 1 ("What color?"): kind must be text such as "color" or "count", not ""'),
    ("the same question twice", lambda r: set_row(r, "test", 2, {"file_name": "pic02.png", "questions": [
        Q, Q | {"kind": "count", "answer": "2"}, Q | {"question": "what color? "}]}),
     'TEST:2: question 2 ("What color?") repeats question 1; ask each question once a picture'),
    ("heldout on training", lambda r: set_row(r, "train", 9, {"file_name": "pic09.png", "text": "a", "heldout": True}),
     "TRAIN:9: heldout on a training picture; heldout marks a test picture showing a combination never seen in "
     "training (move it to test/ or drop the flag)"),
    ("heldout not true or false", lambda r: set_row(r, "test", 5, {"file_name": "pic05.png", "heldout": "yes",
                                                                    "questions": [Q]}),
     'TEST:5: heldout must be true or false, not "yes"'),
    ("training with neither captions nor questions", lambda r: (r / "train" / "metadata.jsonl").write_text(
        "".join(json.dumps({"file_name": f"pic{i:02d}.png"}) + "\n" for i in range(1, 13))),
     "TRAIN: no training picture has a caption (text) or questions; the audit trains on one or both"),
    ("a test without questions", lambda r: (r / "test" / "metadata.jsonl").write_text(
        "".join(json.dumps({"file_name": f"pic{i:02d}.png", "text": "a", "questions": []}) + "\n"
                for i in range(1, 7))),
     "TEST: no test picture has questions; the audit scores the answers to the test questions"),
]


@pytest.mark.parametrize("how, says", [(case, says) for case, _, says in BAD] + [("no folder", None)],
                         ids=[case for case, _, _ in BAD] + ["no folder"])
def test_a_bad_folder_is_one_line_naming_the_file_and_row_and_changes_nothing(tmp_path, how, says):
    root = example(tmp_path)
    if how == "no folder":
        root, says = tmp_path / "nowhere", f"ROOT: no such folder (expected {LAYOUT})"
    else:
        dict((case, do) for case, do, _ in BAD)[how](root)
    before = snapshot(root) if root.exists() else None
    with pytest.raises(FrozenbridgeError) as err:
        read_audit_folder(root)
    expected = (says.replace("TRAIN", str(root / "train" / "metadata.jsonl"))
                .replace("TEST", str(root / "test" / "metadata.jsonl")).replace("ROOT", str(root)))
    assert str(err.value) == expected
    assert "\n" not in str(err.value)
    if before is not None:
        assert snapshot(root) == before  # nothing the user made is changed, and nothing is added
    else:
        assert not root.exists()
