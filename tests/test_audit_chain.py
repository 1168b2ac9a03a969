"""The audit's chain on tiny models: a hand-written folder (the example) through `frozenbridge audit`, and the shapes
study's pictures exported as an audit folder, read back with their questions, kinds and held-out marks."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml

from frozenbridge.audit.data.example import write_example_folder
from frozenbridge.audit.data.export import export_shapes
from frozenbridge.audit.data.features import load_features
from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.agreement import EXPORTED, agreement
from frozenbridge.audit.evaluation.answers import other_pictures
from frozenbridge.audit.params import Params
from frozenbridge.cli import main as cli


def tiny_params(tiny_models, folder, **train) -> dict:
    return {"seed": 0, "device": "cpu",
            "vision": {"name": str(tiny_models["clip"]), "features": "patches", "layer": None, "dtype": "float32",
                       "batch_size": 8},
            "language": {"name": str(tiny_models["qwen2"])},
            "audit": {"folder": str(folder), "train": {"stage1_steps": 4, "stage2_steps": 3, "compile": False,
                                                       "precision": "fp32", **train},
                      "evaluate": {"bootstrap": 20}}}


@pytest.fixture(scope="module")
def audited(tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp("audit")
    folder = write_example_folder(root / "mine")
    params = root / "params.yaml"
    params.write_text(yaml.safe_dump(tiny_params(tiny_models, folder)))
    assert cli(["audit", str(folder), "--out", str(root / "out"), "--params", str(params)]) == 0
    return root, folder, params


def test_a_hand_written_folder_goes_through_the_whole_audit(audited):
    root, folder, _ = audited
    out = root / "out"
    numbers = json.loads((out / "audit.json").read_text())
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    f = read_audit_folder(folder)
    assert len(answers) == f.test.n_questions == numbers["checks"]["overall"]["questions"]
    assert all(set(a["said"]) == {"right", "blank", "other", "none"} for a in answers)
    assert numbers["training"]["stage1"]["steps"] == 4 and numbers["training"]["stage2"]["steps"] == 3
    assert set(numbers["checks"]["kinds"]) == set(f.kinds)
    assert numbers["checks"]["seen_heldout"] is not None  # the example marks two test pictures held out
    assert set(numbers["probe"]["kinds"]) == set(f.kinds)
    assert numbers["agreement"] is None  # not the shapes study's pictures
    page = (out / "audit.md").read_text()
    assert (out / "audit.png").stat().st_size > 0
    assert f"{numbers['checks']['overall']['gap']:g}" in page or str(numbers['checks']['overall']['gap']) in page
    run = json.loads((out / "run" / "run.json").read_text())
    assert run["stage1"]["steps"] == 4 and (out / "run" / "model" / "config.json").is_file()


def test_a_second_audit_keeps_the_features_and_gives_the_same_numbers(audited, caplog):
    root, folder, params = audited
    first = (root / "out" / "audit.json").read_text()
    before = (root / "out" / "features" / "train.parquet").stat().st_mtime_ns
    assert cli(["audit", str(folder), "--out", str(root / "out"), "--params", str(params)]) == 0
    assert (root / "out" / "features" / "train.parquet").stat().st_mtime_ns == before
    assert (root / "out" / "audit.json").read_text() == first


def test_features_of_another_folder_are_refused(audited, tmp_path, tiny_models):
    from frozenbridge.core.errors import FrozenbridgeError

    root, folder, _ = audited
    other = write_example_folder(tmp_path / "other")
    (other / "test" / "metadata.jsonl").write_text(
        "".join(reversed((other / "test" / "metadata.jsonl").read_text().splitlines(keepends=True))))
    params = Params.parse(tiny_params(tiny_models, other))
    with pytest.raises(FrozenbridgeError, match="encoded from other pictures"):
        load_features(root / "out" / "features", read_audit_folder(other), params)


def test_without_captions_stage_1_is_skipped_and_the_page_says_so(tmp_path, tiny_models):
    folder = write_example_folder(tmp_path / "nocaptions")
    meta = folder / "train" / "metadata.jsonl"
    rows = [json.loads(line) for line in meta.read_text().splitlines()]
    meta.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "text"}) + "\n" for r in rows))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(tiny_params(tiny_models, folder)))
    assert cli(["audit", str(folder), "--out", str(tmp_path / "out"), "--params", str(params), "--json"]) == 0
    numbers = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert numbers["training"]["stage1"] is None and numbers["training"]["stage2"]["steps"] == 3
    assert "caption" in (tmp_path / "out" / "audit.md").read_text().lower()


def test_a_bad_folder_is_one_line_before_any_work(tmp_path, capsys):
    folder = write_example_folder(tmp_path / "bad")
    (folder / "test" / "metadata.jsonl").write_text('{"file_name": "nothere.png", "questions": []}\n')
    assert cli(["audit", str(folder), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "metadata.jsonl:1" in err and "nothere.png" in err
    assert not (tmp_path / "out").exists()


def test_every_test_picture_is_shown_once_as_another_ones():
    for n in (2, 3, 5, 8):
        others = other_pictures(n)
        assert sorted(others) == list(range(n)) and all(o != i for i, o in enumerate(others))
    assert other_pictures(1) == [-1]


def test_the_shapes_pictures_export_as_an_audit_folder(tmp_path):
    from frozenbridge.shapes.data.splits import generate_split, split_seeds
    from frozenbridge.shapes.params import DataParams, SplitSizes

    cfg = DataParams(sizes=SplitSizes(train=6, test_seen=3, test_heldout=3))
    seeds = split_seeds(cfg.seed)
    pictures = tmp_path / "pictures"
    pictures.mkdir()
    for split in ("train", "test_seen", "test_heldout"):
        pq.write_table(generate_split(split, getattr(cfg.sizes, split), cfg, seeds[split]), pictures / f"{split}.parquet")
    counts = export_shapes(pictures, tmp_path / "exported")
    folder = read_audit_folder(tmp_path / "exported")
    assert (tmp_path / "exported" / EXPORTED).is_file()
    assert folder.train.n_pictures == 6 and folder.test.n_pictures == 6 and folder.test.n_heldout == 3
    assert counts["train"]["questions"] == folder.train.n_questions
    assert set(folder.kinds) <= {"count", "binding", "leftmost"}
    source = pq.read_table(pictures / "test_heldout.parquet").to_pylist()
    held = [p for p in folder.test.pictures if p.heldout]
    assert [p.caption for p in held] == [r["caption"] for r in source]
    assert [[(q.question, q.answer, q.kind) for q in p.questions] for p in held] == \
        [[(q["question"], q["answer"], q["type"]) for q in r["questions"]] for r in source]
    assert all(p.file_name.startswith("test_heldout-") for p in held)


def test_agreement_sets_each_kind_beside_the_studys_range(tmp_path):
    block = {"score": {"right": 50.0}, "gap": 20.0}
    checks = {"seen_heldout": {"seen": {"kinds": {"count": block}}, "heldout": None}}
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"caption_qa": {"seen": {"count": {"right": {"min": 40, "median": 45, "max": 60},
                                                                    "gap": {"min": 25, "median": 30, "max": 35}}}}}))
    got = agreement(checks, scores)
    assert [(r["what"], r["within"]) for r in got["rows"]] == [("count, seen, right picture", True),
                                                               ("count, seen, gap", False)]
    assert got["within"] == 1
    assert agreement(checks, tmp_path / "missing.json") is None
