"""The one-token study: a captioned folder read and checked, its pictures encoded once, a tiny connector trained per
replicate, captions scored by agreement in a tiny random CLIP's own space, the alignment check, and the trained run
used by the `frozenbridge` command line."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from frozenbridge.cli import main as cli
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.onetoken.data.features import PictureFeatures
from frozenbridge.onetoken.data.folder import read_folder
from frozenbridge.onetoken.evaluation.scorers import NotAvailable, Scorer, alignment, shapes_rows
from frozenbridge.onetoken.evaluation.scoring import share

ROOT = Path(__file__).resolve().parents[1]
COLORS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (30, 60, 220), "yellow": (230, 210, 30)}


def picture(path: Path, color: str, square: bool) -> None:
    im = Image.new("RGB", (32, 32), "white")
    box = (6, 6, 26, 26)
    pixels = im.load()
    for x in range(box[0], box[2]):
        for y in range(box[1], box[3]):
            if square or (x - 16) ** 2 + (y - 16) ** 2 < 100:
                pixels[x, y] = COLORS[color]
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)


def captioned_folder(root: Path, fmt: str = "jsonl") -> Path:
    """12 pictures (a colored square or circle); jsonl: a list of two captions each; csv: the picture's row twice."""
    rows = []
    for i, (color, square) in enumerate((c, s) for c in COLORS for s in (True, False, True)):
        name = f"{i:02d}.png"
        picture(root / name, color, square)
        rows.append((name, [f"a {color} {'square' if square else 'circle'}", f"one {color} shape"]))
    if fmt == "jsonl":
        (root / "metadata.jsonl").write_text("".join(json.dumps({"file_name": n, "text": t}) + "\n" for n, t in rows))
    else:
        lines = ["file_name,text"] + [f"{n},{c}" for n, t in rows for c in t]
        (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    return root


def test_jsonl_and_csv_folders_read_the_same_pictures_and_captions(tmp_path):
    a = read_folder(captioned_folder(tmp_path / "a"), 0.25, seed=0)
    b = read_folder(captioned_folder(tmp_path / "b", "csv"), 0.25, seed=0)
    assert [len(a[s]) for s in ("train", "test")] == [9, 3]
    for split in ("train", "test"):
        assert [(p.file_name, p.captions) for p in a[split]] == [(p.file_name, p.captions) for p in b[split]]
    assert all(len(p.captions) == 2 for p in a["train"])
    assert read_folder(tmp_path / "a", 0.25, seed=0)["test"] == a["test"]  # the split is the seed's
    assert read_folder(tmp_path / "a", 0.25, seed=1)["test"] != a["test"]


def test_train_and_test_subfolders_keep_their_split(tmp_path):
    for split, n in (("train", 3), ("test", 2)):
        for i in range(n):
            picture(tmp_path / split / f"{i}.png", "red", True)
        (tmp_path / split / "metadata.jsonl").write_text(
            "".join(json.dumps({"file_name": f"{i}.png", "text": "a red square", "set": split}) + "\n"
                    for i in range(n)))
    splits = read_folder(tmp_path, 0.5, seed=0)
    assert {s: len(p) for s, p in splits.items()} == {"train": 3, "test": 2}
    assert splits["test"][0].extra == {"set": "test"}


def _break(root: Path, how: str) -> None:
    meta = root / "metadata.jsonl"
    if how == "no folder":
        import shutil
        shutil.rmtree(root)
    elif how == "no metadata":
        meta.unlink()
    elif how == "both metadata":
        (root / "metadata.csv").write_text("file_name,text\n00.png,a\n")
    elif how == "malformed line":
        meta.write_text(meta.read_text() + "{not json\n")
    elif how == "no text column":
        meta.write_text(meta.read_text() + json.dumps({"file_name": "00.png"}) + "\n")
    elif how == "empty caption":
        meta.write_text(meta.read_text() + json.dumps({"file_name": "00.png", "text": " "}) + "\n")
    elif how == "absent picture":
        meta.write_text(meta.read_text() + json.dumps({"file_name": "gone.png", "text": "a"}) + "\n")
    elif how == "not an image":
        (root / "00.png").write_text("this is text")
    elif how == "empty":
        meta.write_text("")


@pytest.mark.parametrize("how, says", [
    ("no folder", "no such folder"), ("no metadata", "no metadata.jsonl or metadata.csv"),
    ("both metadata", "keep one"), ("malformed line", "metadata.jsonl:13: not a JSON object"),
    ("no text column", "metadata.jsonl:13: no text column"), ("empty caption", "non-empty caption"),
    ("absent picture", "names 'gone.png'"), ("not an image", "00.png: not a picture"), ("empty", "names no pictures"),
])
def test_a_bad_folder_is_one_line_naming_the_file(tmp_path, how, says):
    root = captioned_folder(tmp_path / "f")
    _break(root, how)
    with pytest.raises(FrozenbridgeError, match=says) as err:
        read_folder(root, 0.2, seed=0)
    assert "\n" not in str(err.value)


def test_agreement_alignment_and_share_of_the_gap_on_hand_made_vectors():
    pictures = torch.eye(3)
    table = {"x": torch.tensor([1.0, 0, 0]), "y": torch.tensor([0, 1.0, 0]), "z": torch.tensor([0.6, 0.8, 0]),
             " ": torch.tensor([0, 0, -1.0])}
    scorer = Scorer("hand", pictures, lambda texts: torch.stack([table[t] for t in texts]))
    assert scorer.agreement([["x"], ["y", "z"], [""]]) == pytest.approx([1.0, 0.9, -1.0])  # "" scored as " "
    check = alignment(scorer, [["x"], ["z"], ["x"]])  # picture 2 has no near caption; its caption equals picture 0's
    assert check["pictures"] == 3 and check["matched"] == pytest.approx((1 + 0.8 + 0) / 3, abs=1e-4)
    # sim[i, j] = picture i . text j = text j's i-th entry: rows [1, .6, 1], [0, .8, 0], [0, 0, 0]
    assert check["mismatched"] == pytest.approx((0.6 + 1 + 0 + 0 + 0 + 0) / 6, abs=1e-4)
    assert check["own_nearest"] == 100.0  # 0: x (own); 1: z (own); 2: all zero -> the first, "x", its own text
    check = alignment(scorer, [["y"], ["x"], ["z"]])  # rows [0, 1, .6], [1, 0, .8], [0, 0, 0]
    assert check["own_nearest"] == 0.0 and check["chance"] == pytest.approx(100 / 3, abs=0.01)
    assert check["matched"] == 0.0 and check["mismatched"] == pytest.approx((1 + 0.6 + 1 + 0.8) / 6, abs=1e-4)
    assert share(0.19, 0.21, 0.31) == pytest.approx(1 / 6, abs=1e-4) and share(0.2, 0.3, 0.2) is None


def test_the_summary_of_hand_made_runs_has_known_agreement_share_and_medians():
    """score() on two hand-made replicates in a 2-d space: every agreement, the ceiling, each share of the gap (one
    above 1: a share is not clipped) and the medians over replicates are the numbers worked out by hand."""
    from frozenbridge.onetoken.evaluation.scoring import score

    table = {"x": torch.tensor([1.0, 0]), "y": torch.tensor([0, 1.0]), "z": torch.tensor([0.6, 0.8]),
             "w": torch.tensor([0.8, 0.6]), " ": torch.tensor([-1.0, 0])}
    scorer = Scorer("hand", torch.eye(2), lambda texts: torch.stack([table[t] for t in texts]))
    test = PictureFeatures(torch.zeros(2, 1, 2), ["a.png", "b.png"], [["x", "w"], ["y"]], [{}, {}], {})

    def run(floor, trained, distinct):
        s = {"exact": 0.0, "distinct": distinct, "by_set": {}}
        return {"trainable": 10, "loss_end": 1.0, "scores": {"floor": s, "trained": {**s, "distinct": distinct + 1}},
                "captions": [{"floor": f, "trained": t} for f, t in zip(floor, trained, strict=True)]}

    out = score({0: run(["y", "x"], ["w", "z"], 1), 1: run(["", "x"], ["x", "y"], 2)}, test, scorer, None)
    assert out["ceiling"] == pytest.approx((1 + 0.8) / 4 + 1 / 2)  # picture 0: mean(x, w) = 0.9; picture 1: 1
    r0, r1 = out["replicates"]["0"], out["replicates"]["1"]
    assert (r0["floor"]["agreement"], r0["trained"]["agreement"]) == (0.0, 0.8)
    assert (r1["floor"]["agreement"], r1["trained"]["agreement"]) == (-0.5, 1.0)  # "" is scored as " "
    assert r0["share_of_gap"] == round(0.8 / 0.95, 4) and r1["share_of_gap"] == round(1.5 / 1.45, 4)
    assert out["median"]["share_of_gap"] == {"median": round((0.8421 + 1.0345) / 2, 6), "min": 0.8421, "max": 1.0345}
    assert out["median"]["floor"]["agreement"] == {"median": -0.25, "min": -0.5, "max": 0.0}
    assert out["median"]["trained"]["distinct"] == {"median": 2.5, "min": 2, "max": 3}
    bare = score({0: run(["y", "x"], ["w", "z"], 1)}, test, None, "no space")
    assert not bare["available"] and bare["why"] == "no space" and "share_of_gap" not in bare["replicates"]["0"]


def test_caption_scores_count_exact_matches_by_set_and_distinct_captions_on_hand_made_captions():
    """Exact match is against any of a picture's captions after trimming; distinct counts the sentences written."""
    from frozenbridge.onetoken.training.run import caption_scores

    test = PictureFeatures(torch.zeros(4, 1, 2), [f"{i}.png" for i in range(4)],
                           [["a red square", "one red shape"], ["a green circle"], ["a blue circle", "one blue shape"],
                            ["a blue square"]],
                           [{"set": "seen"}, {"set": "seen"}, {"set": "heldout"}, {"set": "heldout"}], {})
    written = ["a red square", "a red square", "one blue shape ", "a blue square"]  # right, wrong, right, right
    assert caption_scores(written, test) == {
        "pictures": 4, "exact": 75.0, "distinct": 3,
        "by_set": {"heldout": {"pictures": 2, "exact": 100.0}, "seen": {"pictures": 2, "exact": 50.0}}}
    assert caption_scores(["a red square"] * 3, test)["distinct"] == 1  # a collapsed connector: one sentence


def test_the_retrieval_scorer_is_not_available_for_pictures_that_are_not_the_shapes_ones():
    feats = PictureFeatures(torch.zeros(2, 1, 4), ["a.png", "b.png"], [["x"], ["y"]],
                            [{"shapes_split": "test_seen", "shapes_id": 3}, {}], {})
    with pytest.raises(NotAvailable, match="b.png is not a shapes picture"):
        shapes_rows(feats, 2)
    assert shapes_rows(feats, 1) == [("test_seen", 3)]


def run_stage(script: str, params: Path, *args: str) -> None:
    argv = sys.argv
    sys.argv = [script, "--params", str(params), *args]
    try:
        runpy.run_path(str(ROOT / script), run_name="__main__")
    finally:
        sys.argv = argv


@pytest.fixture(scope="module")
def study(tiny_models, tmp_path_factory) -> Path:
    """The whole path in a scratch project: a tiny captioned folder, the tiny random CLIP as the encoder (and so as
    the scorer), the tiny Qwen2 as the language model, two replicates of a few steps."""
    root = tmp_path_factory.mktemp("onetoken")
    captioned_folder(root / "pictures")
    params = {"seed": 0, "device": "cpu", "replicates": [0, 1], "language": {"name": str(tiny_models["qwen2"])},
              "onetoken": {"folder": str(root / "pictures"), "test_fraction": 0.34,
                           "encoder": {"name": str(tiny_models["clip"]), "batch_size": 5},
                           "train": {"steps": 4, "batch_size": 4, "lr": 0.01, "precision": "fp32"},
                           "evaluate": {"batch_size": 8, "caption_tokens": 6}, "agreement": {"shown": 3}}}
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    cwd = Path.cwd()
    import os
    os.chdir(root)
    try:
        run_stage("stages/onetoken/encode.py", root / "params.yaml")
        for rep in ("0", "1"):
            run_stage("stages/onetoken/train.py", root / "params.yaml", "--replicate", rep)
        run_stage("stages/onetoken/score.py", root / "params.yaml")
    finally:
        os.chdir(cwd)
    return root


def test_pictures_are_encoded_once_as_pooled_vectors_with_their_captions(study):
    from frozenbridge.onetoken.data.features import load_pictures

    encode = json.loads((study / "metrics/onetoken/encode.json").read_text())
    assert encode["splits"] == {"train": {"pictures": 8, "captions": 16}, "test": {"pictures": 4, "captions": 8}}
    test = load_pictures(study / "data/onetoken/features/test.parquet", encode["encoder"])
    assert test.feats.shape[:2] == (4, 1) and all(len(c) == 2 for c in test.captions)
    with pytest.raises(FrozenbridgeError, match="rerun `dvc repro onetoken_encode`"):
        load_pictures(study / "data/onetoken/features/test.parquet", "efficientnet-lite0")


def clip_cosines(model_dir: Path, pictures: torch.Tensor, texts: list[str]) -> np.ndarray:
    """cos(picture i, text j), the texts embedded by transformers' CLIP directly, one at a time (an empty caption
    as a lone space): a computation apart from the scorer's."""
    from transformers import AutoTokenizer, CLIPModel

    model, tokenizer = CLIPModel.from_pretrained(model_dir).eval(), AutoTokenizer.from_pretrained(model_dir)
    vectors = []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer([text if text.strip() else " "], return_tensors="pt")
            out = model.get_text_features(input_ids=enc.input_ids, attention_mask=enc.attention_mask)
            vectors.append(getattr(out, "pooler_output", out))
    texts_n = torch.nn.functional.normalize(torch.cat(vectors).float(), dim=-1)
    return (torch.nn.functional.normalize(pictures.float(), dim=-1) @ texts_n.T).numpy()


def test_every_replicate_is_trained_and_scored_in_clips_own_space(study, tiny_models):
    """The agreements, share of the gap and alignment check in scores.json equal the same numbers recomputed from
    the runs' captions and the cached picture vectors with transformers' CLIP; distinct counts the run's captions."""
    from frozenbridge.onetoken.data.features import load_pictures

    scores = json.loads((study / "metrics/onetoken/scores.json").read_text())
    assert scores["available"] and "its own text tower" in scores["scorer"] and scores["why"] is None
    assert set(scores["replicates"]) == {"0", "1"} and scores["pictures"] == 4
    clip = tiny_models["clip"]
    test = load_pictures(study / "data/onetoken/features/test.parquet", str(clip))
    pictures = test.feats[:4, 0]
    ceiling = float(np.mean([clip_cosines(clip, pictures[i:i + 1], caps).mean()
                             for i, caps in enumerate(test.captions[:4])]))
    assert scores["ceiling"] == pytest.approx(ceiling, abs=2e-4)
    for rep, row in scores["replicates"].items():
        captions = json.loads((study / f"runs/onetoken/{rep}/result.json").read_text())["captions"]
        agree = {kind: float(np.mean(np.diag(clip_cosines(clip, pictures, [c[kind] for c in captions]))))
                 for kind in ("floor", "trained")}
        for kind in ("floor", "trained"):
            assert row[kind]["agreement"] == pytest.approx(agree[kind], abs=2e-4), (rep, kind)
            assert row[kind]["distinct"] == len({c[kind] for c in captions}), (rep, kind)
        gap = ceiling - agree["floor"]
        assert row["share_of_gap"] == pytest.approx((agree["trained"] - agree["floor"]) / gap,
                                                    abs=max(1e-3, 5e-4 / abs(gap)))
        assert row["trainable"] > 0
    a = scores["alignment"]
    first = [c[0] for c in test.captions[:4]]
    sim = clip_cosines(clip, pictures, first)
    assert a["pictures"] == 4 and a["matched"] == pytest.approx(float(np.diag(sim).mean()), abs=2e-4)
    assert a["mismatched"] == pytest.approx(float(sim[~np.eye(4, dtype=bool)].mean()), abs=2e-4)
    assert a["own_nearest"] == 100 * np.mean([first[j] == first[i] for i, j in enumerate(sim.argmax(1))])
    assert (study / "plots/onetoken/alignment.png").stat().st_size > 0
    rows = (study / "plots/onetoken/agreement.csv").read_text().splitlines()
    assert rows[0] == "captions,kind,replicate,agreement" and len(rows) == 1 + 2 * 2 + 1
    result = json.loads((study / "runs/onetoken/0/result.json").read_text())
    assert len(result["history"]) == 4 and len(result["captions"]) == 4


def test_training_compiles_its_layers_by_default_and_captions_eager(study, tiny_models, compiles, tmp_path,
                                                                    caplog):
    """onetoken.train.compile: auto on this CPU (with g++) compiles the decoder layers for the training steps, says
    so and records it; the captions before and after are decoded eager, and the run follows the eager one: the
    same captions, the same loss curve within inductor's rounding."""
    import dataclasses
    import logging

    from frozenbridge.core.backbones import load_language
    from frozenbridge.onetoken.data.features import load_pictures
    from frozenbridge.onetoken.params import load_params
    from frozenbridge.onetoken.training.run import train_run

    base = load_params(study / "params.yaml")
    train, test = (load_pictures(study / f"data/onetoken/features/{s}.parquet", str(tiny_models["clip"]))
                   for s in ("train", "test"))
    runs = {}
    for compile_ in ("auto", False):
        o = base.onetoken
        p = dataclasses.replace(base, onetoken=dataclasses.replace(o, train=dataclasses.replace(o.train,
                                                                                                compile=compile_)))
        with caplog.at_level(logging.INFO, logger="frozenbridge.onetoken"):
            caplog.clear()
            runs[compile_] = train_run(p, 0, train, test, load_language(str(tiny_models["qwen2"])),
                                       torch.device("cpu"), False, tmp_path / str(compile_))
        assert ("decoder layers compiled" in caplog.text) is (compile_ == "auto")
    compiled, eager = runs["auto"], runs[False]
    assert compiled["compiled_layers"] is True and eager["compiled_layers"] is False
    assert compiled["captions"] == eager["captions"]
    assert [h["loss"] for h in compiled["history"]] == pytest.approx([h["loss"] for h in eager["history"]], rel=1e-3)


def test_the_command_line_captions_with_the_trained_one_token_run(study, capsys):
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.onetoken.training.run import item

    run_dir = study / "runs/onetoken/0/model"
    assert json.loads((run_dir / "config.json").read_text())["captioning"]["prompt"] == "This is a picture of:"
    pic = study / "pictures/00.png"
    assert cli(["caption", str(run_dir), str(pic), "--json", "--device", "cpu", "--max-tokens", "6"]) == 0
    written = json.loads(capsys.readouterr().out)[0]["caption"]
    run = load_run(run_dir, torch.device("cpu"), bf16=False)
    feats = run.encoder().encode([Image.open(pic).convert("RGB")])
    assert written == run.model.generate([item("This is a picture of:", 0)], feats, 6)[0]
    assert cli(["ask", str(run_dir), str(pic), "What color?", "--device", "cpu"]) == 2
    assert "trained to caption only" in capsys.readouterr().err


def test_a_saved_dataset_becomes_a_captioned_folder_and_a_missing_one_is_one_line(tmp_path, capsys):
    import datasets

    images = [Image.new("RGB", (8, 8), c) for c in ("red", "blue", "green")]
    datasets.Dataset.from_dict({"image": images, "caption": [["a red one", "red"], ["blue"], ["green"]]},
                               features=datasets.Features({"image": datasets.Image(),
                                                           "caption": datasets.List(datasets.Value("string"))})
                               ).save_to_disk(str(tmp_path / "saved"))
    assert cli(["folder", str(tmp_path / "saved"), str(tmp_path / "out"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pictures"] == 3
    splits = read_folder(tmp_path / "out", 0.34, seed=0)
    assert sorted(c for s in splits.values() for p in s for c in p.captions) == ["a red one", "blue", "green", "red"]
    assert cli(["folder", "nobody/no-such-dataset", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "not in the local datasets cache" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "none").exists()
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "out" / "000000.png")), np.asarray(images[0]))
