"""The audit benchmark (issue 52, point 6): its synthetic folder reads back as an audit folder with 8 right questions
a picture, half its test pictures held out; the chain's five parts are timed in run_audit's order; and
`python -m frozenbridge.bench` lists it. The chain itself is not run here (minutes on a CPU)."""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.audit.data.folder import METADATA, read_audit_folder
from frozenbridge.bench.__main__ import benchmarks
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.shapes.data.vocab import COLORS, NUMBER_WORDS
from frozenbridge.shapes.params import load_params

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params.yaml"
KINDS = ["count", "count", "color", "color", "color", "shape", "shape", "exists"]


def scenes(train: int, test: int) -> dict[str, list[dict]]:
    """Each picture's shapes by its file name, drawn again from the study's generator and seeds."""
    cfg = load_params(PARAMS).shapes.data
    seeds = split_seeds(cfg.seed)
    out = {}
    for part, n in (("train", train), ("test_seen", test - test // 2), ("test_heldout", test // 2)):
        table = generate_split(part, n, cfg, seeds[part])
        for pid, shapes in zip(table.column("id").to_pylist(), table.column("shapes").to_pylist()):
            out[f"{part}-{pid:05d}.png"] = shapes
    return out


def test_the_folder_reads_back_with_eight_right_questions_a_picture(tmp_path):
    from frozenbridge.bench.audit import write_bench_folder

    folder = read_audit_folder(write_bench_folder(tmp_path / "folder", 6, 4, PARAMS))
    assert folder.train.n_pictures == 6 and folder.test.n_pictures == 4
    assert folder.train.n_heldout == 0 and folder.test.n_heldout == 2
    assert all(p.heldout == p.file_name.startswith("test_heldout-") for p in folder.test.pictures)
    assert folder.kinds == ("color", "count", "exists", "shape")
    scene = scenes(6, 4)
    pictures = folder.train.pictures + folder.test.pictures
    assert {p.file_name for p in pictures} == set(scene)
    for p in pictures:
        shapes = scene[p.file_name]
        assert len(p.questions) == 8 and [q.kind for q in p.questions] == KINDS
        assert p.caption  # the study's caption, for stage 1
        answers = {q.question: q.answer for q in p.questions}
        assert answers["How many shapes are there?"] == NUMBER_WORDS[len(shapes)]
        assert answers["How many circles are there?"] == NUMBER_WORDS[sum(s["kind"] == "circle" for s in shapes)]
        left = min(shapes, key=lambda s: s["cx"])
        right = max(shapes, key=lambda s: s["cx"])
        assert answers["What color is the leftmost shape?"] == left["color"]
        assert answers["What shape is the leftmost one?"] == left["kind"]
        assert answers["What color is the rightmost shape?"] == right["color"]
        assert answers["What shape is the rightmost one?"] == right["kind"]
        assert answers["What color is the largest shape?"] == max(shapes, key=lambda s: s["size"])["color"]
        exists = p.questions[-1]
        color = exists.question.removeprefix("Is there a ").removesuffix(" shape?")
        assert color in COLORS
        assert exists.answer == ("yes" if any(s["color"] == color for s in shapes) else "no")


def test_the_folder_is_the_same_every_time(tmp_path):
    from frozenbridge.bench.audit import write_bench_folder

    a, b = (write_bench_folder(tmp_path / name, 3, 2, PARAMS) for name in ("a", "b"))
    for split in ("train", "test"):
        assert (a / split / METADATA).read_text() == (b / split / METADATA).read_text()
        rows = [json.loads(line) for line in (a / split / METADATA).read_text().splitlines()]
        assert all((a / split / r["file_name"]).read_bytes() == (b / split / r["file_name"]).read_bytes()
                   for r in rows)


def test_the_chain_parts_are_timed_in_run_audits_order(tmp_path, monkeypatch):
    """run_audit with its parts replaced by stand-ins: the benchmark's timers see each of the five once, in order,
    and put them back after."""
    from frozenbridge.audit import chain
    from frozenbridge.audit.params import Params
    from frozenbridge.bench.audit import PARTS, timed_chain
    from frozenbridge.core.errors import FrozenbridgeError

    called = []

    def stand_in(name, result=None):
        def fn(*args, **kwargs):
            called.append(name)
            return result
        return fn

    def no_features(*args):
        raise FrozenbridgeError("no features")

    monkeypatch.setattr(chain, "load_features", no_features)
    for name in PARTS:
        monkeypatch.setattr(chain, name, stand_in(name, {"stand-in": True}))
    originals = {name: getattr(chain, name) for name in PARTS}
    seconds: dict[str, float] = {}
    with timed_chain(seconds):
        one = Params.parse({})  # one replicate, the default for a folder of your own: each part once
        assert chain.run_audit(one, tmp_path / "folder", tmp_path / "out") == {"stand-in": True}
    assert called == list(PARTS) and set(seconds) == set(PARTS)
    assert all(s >= 0 for s in seconds.values())
    assert {name: getattr(chain, name) for name in PARTS} == originals


def test_the_rows_hold_each_part_the_whole_and_the_goal():
    from frozenbridge.bench.audit import GOAL_S, PARTS, audit_rows

    numbers = {"training": {"stage1": {"steps": 200}, "stage2": {"steps": 150}},
               "folder": {"test": {"questions": 1600}}}
    rows = audit_rows(1000, 200, dict.fromkeys(PARTS, 10.0), 600.0, 5.0, numbers)
    goal = rows[-1]
    assert goal["measure"] == "audit of 1000 training pictures x 8 questions + 200 test pictures"
    assert (goal["a"], goal["a_value"], goal["b"], goal["b_value"]) == ("goal (s)", GOAL_S, "measured (s)", 600.0)
    assert goal["ratio"] == 0.5  # measured / goal: at most 1 meets it
    assert any("200 caption + 150 question steps" in r["measure"] for r in rows)
    assert len([r for r in rows if r["measure"].startswith("audit part: ")]) == len(PARTS) == 5


def test_the_benchmark_is_listed():
    assert "audit" in benchmarks()
    assert "20 minutes" in benchmarks()["audit"]
