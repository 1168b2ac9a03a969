"""The audit's numbers from hand-made answers whose numbers are known: scores under each condition, the best control
and the gap, the bootstrap interval over pictures, the prior (wording, then kind, ties alphabetical), seen against
held-out, and every failure class with its precedence."""

from __future__ import annotations

import pytest

from frozenbridge.audit.evaluation.checks import (CONDITION_LABELS, CONDITIONS, CONTROLS, EXAMPLES, FAILURE_CLASSES,
                                                  FAILURE_LABELS, UNKINDED, Prior, audit_numbers, block, failures,
                                                  prior_answers)

BLOCK_KEYS = {"questions", "answers", "replicates", "pictures", "score", "prior", "prior_from_wording", "best_control",
              "gap", "gap_interval"}


def rec(picture: int, question: str, answer: str, right: str, blank: str = "-", other: str = "-", none: str = "-",
        kind: str | None = None, heldout: bool = False, replicate: int = 0) -> dict:
    return {"replicate": replicate, "picture": picture, "file_name": f"p{picture}.png", "question": question,
            "kind": kind, "answer": answer, "heldout": heldout, "said": {"right": right, "blank": blank,
                                                                          "wrong": other, "none": none}}


def four() -> list[dict]:
    """Two pictures, two questions each. Hits: right 3/4, blank 1/4, other 2/4, none 1/4."""
    return [rec(0, "What color?", "red", right="Red ", blank="red", other="blue", none="blue", kind="color"),
            rec(0, "How many?", "2", right="2", blank="1", other="2", none="1", kind="count"),
            rec(1, "What color?", "blue", right="green", blank="red", other="blue", none="red", kind="color"),
            rec(1, "How many?", "3", right="3", blank="1", other="1", none="3", kind="count")]


def no_priors(records: list[dict]) -> list[Prior]:
    return [Prior(None, False)] * len(records)


def test_constants():
    assert CONDITIONS == ("right", "blank", "wrong", "none") and CONTROLS == ("blank", "wrong", "none")
    assert set(CONDITION_LABELS) == set(CONDITIONS) and CONDITION_LABELS["wrong"] == "another picture"
    assert set(FAILURE_LABELS) == set(FAILURE_CLASSES) == {"another_question", "blank_answer", "other"}


def test_scores_best_control_gap_and_interval():
    b = block(four(), no_priors(four()), samples=1000, rng_seed=0)
    assert set(b) == BLOCK_KEYS
    assert b["questions"] == 4 and b["pictures"] == 2
    assert b["score"] == {"right": 75.0, "blank": 25.0, "wrong": 50.0, "none": 25.0}  # "Red " is red
    assert b["best_control"] == "wrong" and b["gap"] == 25.0
    # picture 0 alone: gap 50; picture 1 alone: 0; one of each: 25; each extreme is drawn a quarter of the time
    assert b["gap_interval"] == [0.0, 50.0]


def test_best_control_tie_goes_to_the_first_control():
    records = [rec(0, "q", "a", right="a", blank="a", other="b", none="a"),
               rec(1, "q", "a", right="a", blank="b", other="b", none="b")]
    b = block(records, no_priors(records), 100, 0)
    assert b["score"] == {"right": 100.0, "blank": 50.0, "wrong": 0.0, "none": 50.0}
    assert b["best_control"] == "blank" and b["gap"] == 50.0


def test_one_picture_interval_is_the_gap():
    records = [rec(0, "q1", "a", right="a"), rec(0, "q2", "b", right="b"), rec(0, "q3", "c", right="x")]
    b = block(records, no_priors(records), 1000, 0)
    assert b["pictures"] == 1 and b["gap"] == 66.67 and b["gap_interval"] == [66.67, 66.67]


def pattern(copies: int) -> list[dict]:
    """Per copy, four pictures of one question: right only, right only, blank only, nothing. Gap 25 whatever the
    copies."""
    out = []
    for c in range(copies):
        base = 4 * c
        out += [rec(base, "q", "a", right="a"), rec(base + 1, "q", "a", right="a"),
                rec(base + 2, "q", "a", right="b", blank="a"), rec(base + 3, "q", "a", right="b")]
    return out


def test_interval_contains_the_gap_and_narrows_with_more_pictures():
    small, large = (block(r, no_priors(r), 1000, 0) for r in (pattern(2), pattern(20)))
    for b in (small, large):
        lo, hi = b["gap_interval"]
        assert b["gap"] == 25.0 and lo <= b["gap"] <= hi
    width = [b["gap_interval"][1] - b["gap_interval"][0] for b in (small, large)]
    assert width[1] < width[0] / 2  # ten times the pictures: about a third of the width


def test_interval_resamples_pictures_not_questions():
    """One picture with ten questions, all right, and one with ten, all wrong: a picture bootstrap draws whole
    pictures (gap 0, 50 or 100), a question bootstrap would draw values near 50."""
    records = [rec(0, f"q{i}", "a", right="a") for i in range(10)] + [rec(1, f"q{i}", "a", right="b")
                                                                      for i in range(10)]
    b = block(records, no_priors(records), 1000, 0)
    assert b["gap"] == 50.0 and b["gap_interval"] == [0.0, 100.0]


def test_deterministic_for_a_seed():
    records = pattern(5)
    first = audit_numbers(records, [], samples=300, seed=3)
    assert audit_numbers(records, [], samples=300, seed=3) == first
    other_seed = audit_numbers(records, [], samples=300, seed=4)
    assert other_seed["overall"]["gap_interval"] != first["overall"]["gap_interval"]


TRAIN = [{"question": "What color?", "kind": "color", "answer": "Red"},
         {"question": "what color? ", "kind": "color", "answer": "red"},
         {"question": "What color?", "kind": "color", "answer": "blue"},
         {"question": "Which color is big?", "kind": "color", "answer": "green"},
         {"question": "What shape?", "kind": "shape", "answer": "square"},
         {"question": "What shape?", "kind": "shape", "answer": "circle"},
         {"question": "Anything?", "kind": None, "answer": "yes"}]


def test_prior_by_wording_then_kind_then_none():
    records = [rec(0, "WHAT COLOR?", "red", right="red", kind="color"),  # wording: red 2, blue 1
               rec(0, "What colour?", "red", right="red", kind="color"),  # unseen wording: the kind's red 2
               rec(0, "What shape?", "square", right="x", kind="shape"),  # wording tie: circle before square
               rec(1, "How big?", "big", right="x", kind="size"),  # no such wording nor kind: none
               rec(1, "Something?", "yes", right="x")]  # no kind: the kindless training answers
    priors = prior_answers(records, TRAIN)
    assert priors == [Prior("red", True), Prior("red", False), Prior("circle", True), Prior(None, False),
                      Prior("yes", False)]
    b = block(records, priors, 100, 0)
    assert b["prior"] == 60.0 and b["prior_from_wording"] == 2  # red, red, yes right; circle wrong; none wrong


def test_prior_kind_tie_is_alphabetical():
    train = [{"question": "a?", "kind": "k", "answer": "zebra"}, {"question": "b?", "kind": "k", "answer": "Apple"}]
    assert prior_answers([rec(0, "c?", "apple", right="x", kind="k")], train) == [Prior("apple", False)]


def test_overall_and_kinds():
    out = audit_numbers(four(), TRAIN, samples=200, seed=0)
    assert set(out) == {"conditions", "overall", "kinds", "seen_heldout", "failures", "by_replicate"}
    assert out["conditions"] == list(CONDITIONS)
    assert list(out["kinds"]) == ["color", "count"]
    color, count = out["kinds"]["color"], out["kinds"]["count"]
    assert color["questions"] == 2 and color["score"] == {"right": 50.0, "blank": 50.0, "wrong": 50.0, "none": 0.0}
    assert color["best_control"] == "blank" and color["gap"] == 0.0
    assert color["prior"] == 50.0 and color["prior_from_wording"] == 2  # "What color?" -> red: right once of two
    assert count["score"] == {"right": 100.0, "blank": 0.0, "wrong": 50.0, "none": 50.0} and count["gap"] == 50.0
    assert count["prior"] == 0.0 and count["prior_from_wording"] == 0  # no count kind in training: no prior
    assert out["seen_heldout"] is None


def test_unkinded_questions_have_their_own_group():
    records = four() + [rec(2, "Anything?", "yes", right="yes")]
    kinds = audit_numbers(records, TRAIN, samples=50)["kinds"]
    assert list(kinds) == [UNKINDED, "color", "count"] and kinds[UNKINDED]["questions"] == 1


def test_seen_against_heldout():
    records = four() + [rec(5, "What color?", "red", right="blue", blank="red", kind="color", heldout=True),
                        rec(6, "What color?", "blue", right="blue", kind="color", heldout=True)]
    split = audit_numbers(records, TRAIN, samples=200)["seen_heldout"]
    assert set(split) == {"seen", "heldout"}
    assert set(split["seen"]) == {"overall", "kinds"} and split["seen"]["overall"]["questions"] == 4
    assert split["seen"]["overall"]["score"]["right"] == 75.0
    held = split["heldout"]
    assert held["overall"]["questions"] == 2 and held["overall"]["pictures"] == 2
    assert held["overall"]["score"] == {"right": 50.0, "blank": 50.0, "wrong": 0.0, "none": 0.0}
    assert list(held["kinds"]) == ["color"]
    everything_held = [dict(r, heldout=True) for r in four()]
    assert audit_numbers(everything_held, TRAIN, samples=50)["seen_heldout"]["seen"] is None


FAILING = [
    rec(0, "What color is the square?", "red", right="blue", blank="blue", kind="color"),  # both: another_question
    rec(0, "What color is the circle?", "blue", right="Green", blank="green", kind="color"),  # blank_answer
    rec(0, "How many?", "2", right="2", blank="2", kind="count"),  # right: no failure
    rec(1, "What color is the square?", "yellow", right="blue", blank="red", kind="color"),  # blue is picture 0's
    rec(1, "How many?", "1", right="red", kind="count"),  # nothing about picture 1 is red: other
    rec(2, "What is it?", "a cat", right="a dog")]  # no kind: other


def test_failure_classes_and_precedence():
    f = failures(FAILING)
    assert set(f) == {"wrong", "classes", "kinds", "examples"}
    assert f["wrong"] == 5
    assert f["classes"] == {"another_question": 1, "blank_answer": 1, "other": 3}
    assert [e["class"] for e in f["examples"]] == ["another_question", "blank_answer", "other", "other", "other"]
    assert f["examples"][1] == {"file_name": "p0.png", "question": "What color is the circle?", "kind": "color",
                                "answer": "blue", "said": "Green", "blank": "green", "class": "blank_answer"}


def test_another_question_needs_a_different_truth_on_the_same_picture():
    records = [rec(0, "Color of the square?", "red", right="blue", blank="blue"),
               rec(0, "Color of the circle?", "blue", right="blue"),
               rec(1, "Color of the square?", "red", right="green"),
               rec(1, "Color of the circle?", "red", right="blue")]  # both truths red: no other answer to give
    assert [e["class"] for e in failures(records)["examples"]] == ["another_question", "other", "other"]


def test_failures_per_kind():
    kinds = failures(FAILING)["kinds"]
    assert list(kinds) == [UNKINDED, "color", "count"]
    assert kinds["color"] == {"wrong": 3, "classes": {"another_question": 1, "blank_answer": 1, "other": 1}}
    assert kinds["count"] == {"wrong": 1, "classes": {"another_question": 0, "blank_answer": 0, "other": 1}}
    assert kinds[UNKINDED]["wrong"] == 1


def test_examples_are_the_first_wrong_answers():
    records = [rec(i, "q", "a", right="a" if i % 2 else "b") for i in range(2 * EXAMPLES + 10)]
    f = failures(records)
    assert f["wrong"] == EXAMPLES + 5 and len(f["examples"]) == EXAMPLES == 24
    assert [e["file_name"] for e in f["examples"][:3]] == ["p0.png", "p2.png", "p4.png"]


def test_all_right_has_no_failures():
    f = audit_numbers([rec(0, "q", "a", right="a")], [])["failures"]
    assert f["wrong"] == 0 and f["examples"] == [] and f["kinds"][UNKINDED]["wrong"] == 0


def test_empty_or_incomplete_records_are_refused():
    with pytest.raises(ValueError, match="no test records"):
        audit_numbers([], TRAIN)
    bad = rec(0, "q", "a", right="a")
    del bad["said"]["none"]
    with pytest.raises(ValueError, match=r"test record 0 has no said\['none'\]"):
        audit_numbers([bad], TRAIN)


def test_replicates_pool_their_answers_and_keep_their_own_cells():
    """Two replicates of the same two questions: a score counts every answer, the questions are counted once, and
    each replicate keeps its own scores and gap (replicate 1 reads nothing: its gap is 0)."""
    first = [rec(0, "What color?", "red", right="red", blank="blue", kind="color"),
             rec(1, "What color?", "blue", right="blue", blank="blue", kind="color")]
    second = [{**r, "replicate": 1, "said": {**r["said"], "right": "green"}} for r in first]
    out = audit_numbers(first + second, [], samples=50, seed=0)
    overall = out["overall"]
    assert (overall["questions"], overall["answers"], overall["replicates"]) == (2, 4, 2)
    assert overall["score"]["right"] == 50.0 and overall["score"]["blank"] == 50.0 and overall["gap"] == 0.0
    cells = out["by_replicate"]
    assert set(cells) == {"0", "1"} and set(cells["0"]) == {"all"}  # nothing held out: one side
    assert cells["0"]["all"]["color"]["score"]["right"] == 100.0 and cells["0"]["all"]["color"]["gap"] == 50.0
    assert cells["1"]["all"]["all"]["score"]["right"] == 0.0 and cells["1"]["all"]["all"]["gap"] == -50.0
    assert out["failures"]["wrong"] == 2  # replicate 1's two wrong answers


def test_replicate_cells_split_seen_and_heldout():
    records = [rec(0, "q", "a", right="a", kind="k"), rec(1, "q", "b", right="x", kind="k", heldout=True)]
    cells = audit_numbers(records, [], samples=20, seed=0)["by_replicate"]["0"]
    assert set(cells) == {"all", "seen", "heldout"}
    assert cells["seen"]["k"]["score"]["right"] == 100.0 and cells["heldout"]["k"]["score"]["right"] == 0.0
