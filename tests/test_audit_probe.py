"""The audit's probe on synthetic features: an answer written in one quadrant (and cancelled in the opposite one, so
the overall mean cannot see it) is read perfectly with a grid and not without one; pure noise reads near chance; open
kinds and wordings with too few questions say why."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from frozenbridge.audit.evaluation.probe import probe_inputs, probe_kinds

COLORS = ["blue", "green", "red"]
GRID = (4, 4)
WIDTH = 3
QUESTION = "What color is it?"


def quadrant_features(labels: list[int], seed: int) -> torch.Tensor:
    """(pictures, 16, WIDTH) noise; picture i's class adds 2 to its channel in the top-left quadrant and takes 2
    from it in the bottom-right one: the overall mean holds no trace of it."""
    g = torch.Generator().manual_seed(seed)
    feats = 0.3 * torch.randn(len(labels), *GRID, WIDTH, generator=g)
    for i, c in enumerate(labels):
        feats[i, :2, :2, c] += 2.0
        feats[i, 2:, 2:, c] -= 2.0
    return feats.reshape(len(labels), GRID[0] * GRID[1], WIDTH)


def questions(labels: list[int], kind: str | None = "color", question: str = QUESTION) -> list[dict]:
    return [{"picture": i, "question": question, "kind": kind, "answer": COLORS[c].title()}
            for i, c in enumerate(labels)]


def records(labels: list[int], kind: str | None = "color", model_right: int = 0) -> list[dict]:
    """Test records; the model answers the first `model_right` right and the rest "purple"."""
    return [{**q, "file_name": f"t{q['picture']}.png", "heldout": False,
             "said": {"right": q["answer"] if q["picture"] < model_right else "purple", "blank": "", "other": "",
                      "none": ""}} for q in questions(labels, kind)]


TRAIN_LABELS = [i % 3 for i in range(60)]
TEST_LABELS = [(i * 7 + 1) % 3 for i in range(45)]


def test_probe_inputs_are_the_mean_then_the_quadrant_means():
    feats = torch.arange(16, dtype=torch.float32).reshape(1, 16, 1)  # a 4 x 4 grid holding 0..15 row by row
    x = probe_inputs(feats, (4, 4))
    assert x.shape == (1, 5) and x.dtype == np.float64
    assert x[0].tolist() == [7.5, 2.5, 4.5, 10.5, 12.5]  # all, top-left, top-right, bottom-left, bottom-right
    odd = probe_inputs(torch.arange(6.0).reshape(1, 6, 1), (3, 2))  # rows split 1 | 2
    assert odd[0].tolist() == [2.5, 0.0, 1.0, 3.0, 4.0]
    assert probe_inputs(feats, (1, 16)).shape == (1, 1) and probe_inputs(feats, None).shape == (1, 1)
    with pytest.raises(ValueError, match="4 x 3 grid has 12 cells, the features 16 tokens"):
        probe_inputs(feats, (4, 3))


def test_a_quadrant_answer_is_read_with_the_grid_and_missed_without():
    train, test = quadrant_features(TRAIN_LABELS, 0), quadrant_features(TEST_LABELS, 1)
    with_grid = probe_kinds(train, test, GRID, questions(TRAIN_LABELS), records(TEST_LABELS, model_right=9))
    assert with_grid["input"] == ("the mean and the four quadrant means of the frozen encoder's 4 x 4 grid, "
                                  "15 numbers a picture")
    color = with_grid["kinds"]["color"]
    assert color == {"closed": True, "wordings": 1, "questions": 45, "classes": 3, "probe": 100.0,
                     "chance": color["chance"], "model": 20.0}
    assert 25.0 <= color["chance"] <= 40.0  # always "blue": a third of the test pictures, about
    no_grid = probe_kinds(train, test, None, questions(TRAIN_LABELS), records(TEST_LABELS))
    assert no_grid["input"] == "the mean of the frozen encoder's 16 vectors (no grid), 3 numbers a picture"
    assert no_grid["kinds"]["color"]["probe"] < 60.0
    thin = probe_kinds(train, test, (1, 16), questions(TRAIN_LABELS), records(TEST_LABELS))
    assert thin["input"].startswith("the mean of the frozen encoder's 1 x 16 grid (too thin for quadrants)")


def test_noise_reads_near_chance():
    rng = np.random.default_rng(0)
    train_labels, test_labels = rng.integers(0, 3, 60).tolist(), rng.integers(0, 3, 150).tolist()
    g = torch.Generator().manual_seed(5)
    train, test = torch.randn(60, 16, WIDTH, generator=g), torch.randn(150, 16, WIDTH, generator=g)
    color = probe_kinds(train, test, GRID, questions(train_labels), records(test_labels))["kinds"]["color"]
    assert color["questions"] == 150
    assert abs(color["probe"] - 100 / 3) < 15.0 and color["probe"] < color["chance"] + 15.0


def test_deterministic():
    """Noisy enough that the probe misses some: the same misses on every run."""
    train, test = quadrant_features(TRAIN_LABELS, 2), quadrant_features(TEST_LABELS, 3)
    g = torch.Generator().manual_seed(9)
    train, test = train + 4 * torch.randn(train.shape, generator=g), test + 4 * torch.randn(test.shape, generator=g)
    runs = [probe_kinds(train, test, GRID, questions(TRAIN_LABELS), records(TEST_LABELS)) for _ in range(2)]
    assert runs[0] == runs[1] and 50.0 < runs[0]["kinds"]["color"]["probe"] < 100.0


def test_open_kinds_say_why():
    train, test = quadrant_features(TRAIN_LABELS, 0), quadrant_features([0, 1], 1)
    unseen = records([0, 1])
    unseen[1]["answer"] = "Hexagon"
    assert probe_kinds(train, test, GRID, questions(TRAIN_LABELS), unseen)["kinds"]["color"] == {
        "closed": False, "why": "1 test answer never appears in training"}
    many = [{"picture": i, "question": "How many?", "kind": "count", "answer": str(i % 25)} for i in range(60)]
    counted = [dict(r, kind="count", question="How many?", answer=str(r["picture"])) for r in records([0, 1])]
    assert probe_kinds(train, test, GRID, many, counted)["kinds"]["count"] == {
        "closed": False, "why": "25 distinct answers (more than 20)"}
    assert probe_kinds(train, test, GRID, many, counted, max_classes=25)["kinds"]["count"]["closed"] is True
    assert probe_kinds(train, test, GRID, [], records([0, 1]))["kinds"]["color"] == {
        "closed": False, "why": "no training question has this kind"}


def test_wordings_with_too_few_questions_or_one_answer_are_not_probed():
    train, test = quadrant_features(TRAIN_LABELS, 0), quadrant_features([0, 1], 1)
    few = questions(TRAIN_LABELS[:9])
    assert probe_kinds(train, test, GRID, few, records([0, 1]))["kinds"]["color"] == {
        "closed": True, "questions": 0, "why": "no wording has 10 training questions with 2 answers"}
    assert probe_kinds(train, test, GRID, few, records([0, 1]), min_examples=3)["kinds"]["color"]["questions"] == 2
    one_answer = questions([0] * 30) + questions([1] * 30, question="Another?")
    assert probe_kinds(train, test, GRID, one_answer, records([0, 0]), min_examples=5)["kinds"]["color"] == {
        "closed": True, "questions": 0, "why": "no wording has 5 training questions with 2 answers"}


def test_only_kinds_with_probes_are_scored_and_unkinded_questions_are_not_probed():
    train, test = quadrant_features(TRAIN_LABELS, 0), quadrant_features(TEST_LABELS, 1)
    test_records = records(TEST_LABELS) + [dict(r, kind=None) for r in records([0, 1])]
    out = probe_kinds(train, test, GRID, questions(TRAIN_LABELS) + questions(TRAIN_LABELS, kind=None), test_records)
    assert list(out["kinds"]) == ["color"] and out["kinds"]["color"]["questions"] == 45


def test_feature_shapes_must_match():
    with pytest.raises(ValueError, match="same encoder"):
        probe_kinds(torch.zeros(2, 16, 3), torch.zeros(2, 16, 4), GRID, [], [])
