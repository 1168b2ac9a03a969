"""The gallery of what the model says (shapes.summary.gallery, stage shapes_gallery), on hand-made predictions and a
few generated pictures: the file is written, the grid has a picture and a text panel per cell, each output is marked
right exactly when it is the true answer (the scoring rule), the pictures are chosen deterministically (a task a
picture, held-out questions first), and the stage runs with no torch and names what is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matplotlib.colors as mcolors
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from frozenbridge.shapes.data.draw import png_bytes, render
from frozenbridge.shapes.data.scene import Shape
from frozenbridge.shapes.data.vocab import CONDITIONS, question_prompt
from frozenbridge.shapes.summary import gallery as g

ROOT = Path(__file__).resolve().parents[1]
SIZE = 48
SCENES = [[Shape("red", "circle", 12, 14, 12), Shape("blue", "square", 34, 30, 12)],
          [Shape("green", "triangle", 14, 30, 12)],
          [Shape("yellow", "square", 10, 10, 10), Shape("purple", "circle", 30, 20, 10),
           Shape("orange", "triangle", 24, 38, 10)]]
COUNTS = ("two", "one", "three")
CAPTIONS = ("a red circle and a blue square", "a green triangle",
            "a yellow square, a purple circle and an orange triangle")


def questions(pic: int, held_out: bool = False) -> list[dict]:
    return [{"type": "count", "question": "How many shapes are there?", "answer": COUNTS[pic], "about_held_out": False},
            {"type": "leftmost", "question": "What color is the leftmost shape?",
             "answer": SCENES[pic][0].color, "about_held_out": held_out and pic == 2}]


def pictures_table(held_out: bool = False) -> pa.Table:
    return pa.Table.from_pylist([{"id": 100 + i, "png": png_bytes(render(scene, SIZE)),
                                  "questions": questions(i, held_out)} for i, scene in enumerate(SCENES)])


def item(pic: int, prompt: str, target: str, **outputs: str) -> dict:
    return {"picture": pic, "wrong_picture": (pic + 1) % len(SCENES), "prompt": prompt, "target": target,
            **{cond: outputs.get(cond, "") for cond in CONDITIONS}}


COUNT = question_prompt("How many shapes are there?")
LEFTMOST = question_prompt("What color is the leftmost shape?")
PREDICTIONS = {
    "seen": {
        "caption": [item(0, "Caption:", CAPTIONS[0], right=f" {CAPTIONS[0]} ", blank="a white square"),
                    item(1, "Caption:", CAPTIONS[1], right="a green circle")],
        "count": [item(0, COUNT, "two", right="two", blank="two", wrong="one"),
                  item(1, COUNT, "one", right="three", blank="two", wrong="one", none="one")],
    },
    "heldout": {
        "count": [item(0, COUNT, "two", right="two")],
        "leftmost": [item(0, LEFTMOST, "red", right="red"), item(1, LEFTMOST, "green", right="green"),
                     item(2, LEFTMOST, "yellow", right="purple", wrong="yellow")],
    },
}


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """Draw the hand-made gallery; return (its PNG, the cells it reports, the figure it drew)."""
    figures = []
    close = g.plt.close
    monkeypatch.setattr(g.plt, "close", lambda fig: (figures.append(fig), close(fig)))
    out = tmp_path / "gallery.png"
    shown = g.gallery(PREDICTIONS, {"seen": pictures_table(), "heldout": pictures_table(held_out=True)},
                      "a test recipe", out, per_test=4)
    return out, shown, figures[0]


def test_the_gallery_is_written_as_a_grid(drawn):
    out, shown, fig = drawn
    assert out.stat().st_size > 0 and Image.open(out).format == "PNG"
    assert len(fig.axes) == 2 * 2 * 4  # two test sets, a picture row and a text row each, four cells a row
    with_picture = [ax for ax in fig.axes if ax.get_images()]
    assert len(with_picture) == len(shown) == 4 + 3  # held-out: count has one item, leftmost three, on 3 pictures
    assert all(ax.get_images()[0].get_array().shape[:2] == (SIZE, SIZE) for ax in with_picture)
    assert [(c["test"], c["task"], c["id"]) for c in shown] == [
        ("seen", "caption", 100), ("seen", "count", 101), ("seen", "caption", 101), ("seen", "count", 100),
        ("heldout", "count", 100), ("heldout", "leftmost", 102), ("heldout", "leftmost", 101)]


def test_an_output_is_right_exactly_when_it_is_the_true_answer(drawn):
    _, shown, _ = drawn
    cell = {(c["test"], c["task"], c["picture"]): c for c in shown}
    assert cell["seen", "caption", 0]["right"] == {"right": True, "blank": False, "wrong": False, "none": False}
    assert cell["seen", "caption", 1]["right"]["right"] is False  # a green circle for a green triangle
    assert cell["seen", "count", 0]["right"] == {"right": True, "blank": True, "wrong": False, "none": False}
    assert cell["seen", "count", 1]["right"] == {"right": False, "blank": False, "wrong": True, "none": True}
    assert cell["heldout", "leftmost", 2]["right"] == {"right": False, "blank": False, "wrong": True, "none": False}
    for c in shown:
        assert c["right"] == {cond: c["outputs"][cond].strip() == c["target"] for cond in CONDITIONS}


def test_the_figure_marks_right_outputs_green_and_the_others_red(drawn):
    _, shown, fig = drawn
    lines = [(t.get_text(), mcolors.to_hex(t.get_color())) for ax in fig.axes for t in ax.texts]
    marks = [(text, color) for text, color in lines if text[:1] in g.MARKS.values()]
    assert len(marks) == len(shown) * len(CONDITIONS)  # every output of every cell, each marked once
    for text, color in marks:
        assert (text[0] == g.MARKS[True]) == (color == g.RIGHT) and (text[0] == g.MARKS[False]) == (color == g.WRONG)
    right = sum(v for c in shown for v in c["right"].values())
    assert sum(text[0] == g.MARKS[True] for text, _ in marks) == right
    assert (f"{g.MARKS[True]} right picture: {CAPTIONS[0]}", g.RIGHT) in lines  # trimmed, as scored
    assert (f"{g.MARKS[False]} right picture: a green circle", g.WRONG) in lines
    assert (f"{g.MARKS[False]} no picture: (nothing)", g.WRONG) in lines
    assert any(text.startswith(f"{g.MARKS[True]} wrong picture #100: yellow") for text, _ in lines)
    assert ("true: two", "#000000") in lines


def test_the_rule_is_the_scores_rule_and_needs_no_torch():
    from frozenbridge.shapes.evaluation import scoring
    assert g.exact_match is scoring.exact_match  # one rule, not a copy
    said = [g.exact_match(o, t) for o, t in (("red", "red"), (" red\n", "red"), ("red ", " red"), ("Red", "red"),
                                             ("", "red"), ("red red", "red"), ("a red circle", "a red circle"))]
    assert said == [True, True, True, False, False, False, True]
    code = "import sys, frozenbridge.shapes.summary.gallery; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_the_choice_is_deterministic_and_prefers_held_out_questions():
    heldout = pictures_table(held_out=True).column("questions").to_pylist()
    by_task = PREDICTIONS["heldout"]
    cells = g.choose(by_task, heldout, held_out=True, per_test=2)
    assert [(t, it["picture"]) for t, it in cells] == [("count", 0), ("leftmost", 2)]  # picture 2 is about held out
    assert g.choose(by_task, heldout, held_out=False, per_test=2)[1][1]["picture"] == 1  # else the first new picture
    six = g.choose(by_task, heldout, True, 6)
    assert six == g.choose(by_task, heldout, True, 6)
    assert [c is None for c in six] == [False, False, True, False, True, False]  # count has one item, leftmost three
    assert [it["picture"] for t, it in six[3::2]] == [1, 0]  # a new picture while one is left, then any
    assert g.choose({}, heldout, True, 2) == [None, None]


def test_a_long_output_is_clipped_to_two_lines():
    lines = g._clip("word " * 80)
    assert len(lines) == g.MAX_LINES and lines[-1].endswith("\u2026") and all(len(x) <= g.WRAP for x in lines)
    assert g._clip("") == [""]


def write_inputs(root: Path) -> None:
    pictures = root / "data" / "shapes" / "pictures"
    pictures.mkdir(parents=True)
    for split, held_out in (("test_seen", False), ("test_heldout", True)):
        pq.write_table(pictures_table(held_out), pictures / f"{split}.parquet")
    run = root / "runs" / "shapes" / "qa" / "0"
    run.mkdir(parents=True)
    (run / "predictions.json").write_text(json.dumps(PREDICTIONS))


def stage(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Run stages/shapes/gallery.py in `cwd` with the repository's params.yaml, torch unimportable."""
    argv = [str(ROOT / "stages/shapes/gallery.py"), "--params", str(ROOT / "params.yaml"), *args]
    code = f"import sys, runpy; sys.modules['torch'] = None; sys.argv = {argv!r}; " \
        "runpy.run_path(sys.argv[0], run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_stage_draws_the_first_replicate_without_torch(tmp_path):
    write_inputs(tmp_path)
    proc = stage(tmp_path, "--recipe", "qa")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "plots" / "shapes" / "gallery_qa.png"
    assert Image.open(out).format == "PNG"
    assert [p.name for p in out.parent.iterdir()] == ["gallery_qa.png"]  # no temporary left behind


def test_the_stage_names_the_missing_run(tmp_path):
    write_inputs(tmp_path)
    proc = stage(tmp_path, "--recipe", "caption")
    assert proc.returncode == 2
    assert "runs/shapes/caption/0/predictions.json: not found" in proc.stderr
    assert "dvc repro shapes_evaluate@caption-0" in proc.stderr


def test_the_dvc_stage_reads_the_first_replicate_of_each_recipe():
    import yaml

    body = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["shapes_gallery"]
    assert body["foreach"] == "${shapes.recipes}" and body["do"]["params"] == ["replicates"]
    assert "runs/shapes/${item}/${replicates[0]}/predictions.json" in body["do"]["deps"]
    assert body["do"]["plots"] == [{"plots/shapes/gallery_${item}.png": {"cache": False}}]
