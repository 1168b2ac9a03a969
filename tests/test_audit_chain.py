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
from frozenbridge.audit.evaluation.answers import wrong_for_each
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
    assert all(set(a["said"]) == {"right", "blank", "wrong", "none"} for a in answers)
    assert {a["replicate"] for a in answers} == {0}  # `frozenbridge audit` trains one replicate unless asked
    assert numbers["training"]["stage1"]["steps"] == 4 and numbers["training"]["stage2"]["steps"] == 3
    assert set(numbers["checks"]["kinds"]) == set(f.kinds)
    assert numbers["checks"]["seen_heldout"] is not None  # the example marks two test pictures held out
    assert set(numbers["probe"]["kinds"]) == set(f.kinds)
    assert numbers["agreement"] is None  # not the shapes study's pictures
    page = (out / "audit.md").read_text()
    assert (out / "audit.png").stat().st_size > 0
    assert f"{numbers['checks']['overall']['gap']:g}" in page or str(numbers['checks']['overall']['gap']) in page
    run = json.loads((out / "runs" / "0" / "run.json").read_text())
    assert run["stage1"]["steps"] == 4 and (out / "runs" / "0" / "model" / "config.json").is_file()
    assert set(numbers["training"]["curves"]["0"]) == {"stage1", "stage2"}
    assert numbers["repeats"] == []  # the example's test pictures are new pictures


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


def test_the_wrong_picture_is_drawn_within_the_side_and_kind(tmp_path):
    """As the shapes study draws it: a held-out question is shown another held-out picture asked the same kind, a
    seen one a seen picture, never its own; a kind asked of one picture alone falls back to its side."""
    folder = read_audit_folder(write_example_folder(tmp_path / "f"))
    asked = [(i, p, q) for i, p in enumerate(folder.test.pictures) for q in p.questions]
    wrong = wrong_for_each(folder)
    assert len(wrong) == len(asked)
    for (i, p, q), w in zip(asked, wrong):
        assert w != i and folder.test.pictures[w].heldout == p.heldout
        same_kind = {j for j, pj, qj in asked if pj.heldout == p.heldout and qj.kind == q.kind}
        if len(same_kind) > 1:
            assert w in same_kind


def test_a_test_set_of_one_picture_borrows_a_training_picture(tmp_path):
    root = write_example_folder(tmp_path / "one")
    meta = root / "test" / "metadata.jsonl"
    meta.write_text(meta.read_text().splitlines(keepends=True)[0])
    for extra in sorted((root / "test").glob("pic0[2-9].png")):
        extra.unlink()
    folder = read_audit_folder(root)
    assert wrong_for_each(folder) == [-1] * folder.test.n_questions


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


def test_agreement_pairs_each_replicate_with_the_studys(tmp_path):
    """Replicates 0-4 of the audit against the study's: ranges, and per pair the audit's number minus the study's
    with the exact interval; a replicate the study lacks is left out of the pairs, not of the audit's range."""
    cells = {str(r): {"seen": {"count": {"score": {"right": 50.0 + r}, "gap": 26.0 + r}}} for r in range(6)}
    replicates = tmp_path / "replicates.json"
    replicates.write_text(json.dumps({"caption_qa": {"seen": {"count": {
        str(r): {"right": 40.0 + r, "gap": 25.0 + 2 * r} for r in range(5)}}}}))
    got = agreement({"by_replicate": cells}, replicates)
    right, gap = got["rows"]
    assert (right["test"], right["kind"], right["what"]) == ("seen", "count", "right")
    assert right["paired"]["differences"] == [10.0] * 5 and right["paired"]["supported"] == "first"
    assert right["audit_spread"] == {"median": 52.5, "min": 50.0, "max": 55.0} and right["within"] is False
    assert gap["paired"]["differences"] == [1.0, 0.0, -1.0, -2.0, -3.0] and gap["paired"]["supported"] is None
    assert gap["study_spread"] == {"median": 29.0, "min": 25.0, "max": 33.0} and gap["within"] is True
    assert got["within"] == 1 and got["differ"] == 1
    assert agreement({"by_replicate": cells}, tmp_path / "missing.json") is None

