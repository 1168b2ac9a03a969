"""Pictures, captions and questions: grammar, held-out exclusion, question eligibility, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.data.draw import place, render
from frozenbridge.shapes.data.scene import Shape, caption, questions
from frozenbridge.shapes.data.splits import generate_split, split_seeds, summary
from frozenbridge.shapes.params import DataParams, SplitSizes

CFG = DataParams(sizes=SplitSizes(train=60, test_seen=20, test_heldout=20))
HELD = frozenset(CFG.held_out)


def s(color: str, kind: str, cx: float = 0.0) -> Shape:
    return Shape(color, kind, cx, 50.0, 40.0)


@pytest.mark.parametrize("shapes, expected", [
    ([s("red", "square")], "a red square"),
    ([s("orange", "circle")], "an orange circle"),
    ([s("blue", "triangle"), s("orange", "square")], "a blue triangle and an orange square"),
    ([s("orange", "circle"), s("yellow", "circle"), s("purple", "triangle")],
     "an orange circle, a yellow circle and a purple triangle"),
    ([s("green", "square"), s("red", "circle"), s("blue", "circle"), s("yellow", "triangle")],
     "a green square, a red circle, a blue circle and a yellow triangle"),
])
def test_caption_grammar(shapes, expected):
    assert caption(shapes) == expected


def test_questions_binding_only_with_exactly_one_of_the_kind():
    qs = questions([s("orange", "circle"), s("yellow", "circle"), s("purple", "triangle")])
    by_type = {q.type: [] for q in qs}
    for q in qs:
        by_type[q.type].append((q.question, q.answer))
    assert by_type["count"] == [("How many shapes are there?", "three")]
    assert by_type["binding"] == [("What color is the triangle?", "purple")]  # two circles: no circle question
    assert by_type["leftmost"] == [("What color is the leftmost shape?", "orange")]


def test_questions_flag_held_out_subjects():
    qs = questions([s("red", "triangle"), s("yellow", "circle")], HELD)
    flags = {(q.type, q.answer): q.about_held_out for q in qs}
    assert flags == {("count", "two"): True, ("binding", "red"): True, ("binding", "yellow"): False,
                     ("leftmost", "red"): True}


def test_placement_no_overlap_and_distinct_order():
    rng = np.random.default_rng(0)
    for _ in range(200):
        shapes = place(rng, [("red", "circle")] * 4, 224, (0.18, 0.26))
        xs = [sh.cx for sh in shapes]
        assert xs == sorted(xs) and min(np.diff(xs)) >= 0.04 * 224
        for i, a in enumerate(shapes):
            assert a.size / 2 <= a.cx <= 224 - a.size / 2 and a.size / 2 <= a.cy <= 224 - a.size / 2
            for b in shapes[i + 1:]:
                assert np.hypot(a.cx - b.cx, a.cy - b.cy) > (a.size + b.size) / 2


def test_too_many_shapes_fails_clearly():
    with pytest.raises(FrozenbridgeError, match="shapes.data.shapes or shapes.data.shape_size"):
        place(np.random.default_rng(0), [("red", "circle")] * 9, 64, (0.4, 0.5))


def test_render_draws_the_scene_colors():
    img = np.asarray(render([Shape("red", "square", 50.0, 50.0, 40.0)], 100))
    assert tuple(img[50, 50]) == (220, 38, 38) and tuple(img[5, 5]) == (255, 255, 255)


@pytest.fixture(scope="module")
def splits():
    seeds = split_seeds(CFG.seed)
    return {name: generate_split(name, getattr(CFG.sizes, name), CFG, seeds[name])
            for name in ("train", "test_seen", "test_heldout")}


def test_held_out_pairs_never_in_training_but_every_color_and_kind_is(splits):
    pairs = {(sh["color"], sh["kind"]) for row in splits["train"].column("shapes").to_pylist() for sh in row}
    assert not pairs & HELD
    assert {c for c, _ in pairs} == {"red", "green", "blue", "yellow", "purple", "orange"}
    assert {k for _, k in pairs} == {"circle", "square", "triangle"}
    counts = summary(splits)["train_color_kind"]
    assert all(counts[c][k] == 0 for c, k in HELD) and counts["red"]["circle"] > 0


def test_test_seen_uses_only_seen_pairs(splits):
    pairs = {(sh["color"], sh["kind"]) for row in splits["test_seen"].column("shapes").to_pylist() for sh in row}
    assert not pairs & HELD


def test_held_out_split_asks_about_held_out_pairs(splits):
    for row in splits["test_heldout"].to_pylist():
        assert any((sh["color"], sh["kind"]) in HELD for sh in row["shapes"])
        assert all(q["about_held_out"] for q in row["questions"])
        assert any(q["type"] in ("binding", "leftmost") for q in row["questions"])
        for q in row["questions"]:
            if q["type"] == "binding":
                kind = q["question"].removeprefix("What color is the ").removesuffix("?")
                only = [sh for sh in row["shapes"] if sh["kind"] == kind]
                assert len(only) == 1 and (only[0]["color"], kind) in HELD and q["answer"] == only[0]["color"]
            if q["type"] == "leftmost":
                assert (row["shapes"][0]["color"], row["shapes"][0]["kind"]) in HELD


def test_captions_and_answers_match_the_scene(splits):
    for row in splits["train"].to_pylist():
        shapes = [Shape(**sh) for sh in row["shapes"]]
        assert row["caption"] == caption(shapes)
        assert [sh.cx for sh in shapes] == sorted(sh.cx for sh in shapes)
        assert CFG.shapes[0] <= len(shapes) <= CFG.shapes[1]


def test_generation_is_deterministic_from_data_seed(splits):
    again = generate_split("train", 60, CFG, split_seeds(CFG.seed)["train"])
    assert again.equals(splits["train"])
    other = generate_split("train", 60, CFG, split_seeds(CFG.seed + 1)["train"])
    assert other.column("caption").to_pylist() != splits["train"].column("caption").to_pylist()


def test_split_seeds_are_independent_of_sizes(splits):
    bigger = generate_split("test_seen", 30, CFG, split_seeds(CFG.seed)["test_seen"])
    assert bigger.slice(0, 20).equals(splits["test_seen"])
