"""The `frozenbridge` command line end to end: a tiny run trained on pictures the tiny SigLIP encoded, then
`caption`, `ask` and `draw` as a user types them (the console script the package installs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from frozenbridge.bridge.saved_run import load_run
from frozenbridge.bridge.sequence import Item
from frozenbridge.cli import main
from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.feature_cache import decode_png
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.shapes.data.vocab import caption_prompt, question_prompt
from frozenbridge.shapes.params import DataParams, Params, ShapesParams, SplitSizes, Stage1Until, TrainParams
from frozenbridge.shapes.training.run import train
from frozenbridge.shapes.training.split_data import SplitData

CPU = torch.device("cpu")


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    exe = shutil.which("frozenbridge", path=str(Path(sys.executable).parent)) or shutil.which("frozenbridge")
    assert exe, "the frozenbridge console script is not installed (pip install -e .)"
    proc = subprocess.run([exe, *args], capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                          timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def trained(tiny_models, tmp_path_factory) -> tuple[Path, Path]:
    """(a run trained for a few caption steps on 8 pictures through the tiny SigLIP, one of those pictures)."""
    tmp = tmp_path_factory.mktemp("cli")
    table = generate_split("train", 8, DataParams(image_size=64, sizes=SplitSizes(train=8)), split_seeds(0)["train"])
    pictures = [decode_png(b) for b in table.column("png").to_pylist()]
    encoder = load_vision(str(tiny_models["siglip"]), "patches", None)
    with torch.no_grad():
        feats = encoder.encode(pictures).half()
    data = SplitData(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                     table.column("shapes").to_pylist(), feats, encoder.metadata())
    lm = load_language(str(tiny_models["qwen2"]))
    params = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                          batch_size=4, stage1_steps=3, stage2_steps=2)))
    train(params, None, 0, data, lm, CPU, False, tmp / "run")
    picture = tmp / "picture.png"
    picture.write_bytes(table.column("png")[0].as_py())
    return tmp / "run", picture


def test_caption_writes_what_the_run_writes_for_each_picture(trained):
    run_dir, picture = trained
    out = json.loads(cli("caption", str(run_dir), str(picture), str(picture), "--json", "--device", "cpu",
                         "--max-tokens", "6").stdout)
    assert [r["picture"] for r in out] == [str(picture)] * 2 and out[0]["caption"] == out[1]["caption"]
    run = load_run(run_dir, CPU, False)  # the same run in process, on the same picture
    with torch.no_grad():
        feats = run.encoder().encode([decode_png(picture.read_bytes())])
    assert out[0]["caption"] == run.model.generate([Item(0, caption_prompt(), "")], feats, 6)[0]
    lines = cli("caption", str(run_dir), str(picture), "--device", "cpu", "--max-tokens", "6").stdout
    assert lines.startswith(f"{picture}: ")


def test_ask_answers_one_question(trained):
    run_dir, picture = trained
    out = json.loads(cli("ask", str(run_dir), str(picture), "What color is the circle?", "--json", "--device", "cpu",
                         "--max-tokens", "3").stdout)
    run = load_run(run_dir, CPU, False)
    with torch.no_grad():
        feats = run.encoder().encode([decode_png(picture.read_bytes())])
    want = run.model.generate([Item(0, question_prompt("What color is the circle?"), "")], feats, 3)[0]
    assert out == {"picture": str(picture), "question": "What color is the circle?", "answer": want}


def test_draw_makes_a_picture_with_its_caption_and_questions(tmp_path):
    out = json.loads(cli("draw", "--seed", "3", str(tmp_path / "a.png"), "--image-size", "96", "--json").stdout)
    assert decode_png((tmp_path / "a.png").read_bytes()).size == (96, 96)
    assert out["caption"].startswith("a") and out["questions"][0]["question"] == "How many shapes are there?"
    again = json.loads(cli("draw", "--seed", "3", str(tmp_path / "b.png"), "--image-size", "96", "--json").stdout)
    assert again["caption"] == out["caption"]  # a seed is a picture
    held = json.loads(cli("draw", "--seed", "3", str(tmp_path / "c.png"), "--held-out", "--json").stdout)
    assert any(pair in held["caption"] for pair in held["held_out_pairs"])


def test_every_problem_is_one_line_and_exit_2(trained, tmp_path, capsys):
    """In process (the console script is `main`; the tests above run it as installed)."""
    run_dir, picture = trained

    def fails(*args: str) -> str:
        assert main(list(args)) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        return err

    text = tmp_path / "notes.txt"
    text.write_text("not a picture")
    cases = [(("caption", str(tmp_path / "no-run"), str(picture)), "no saved run here"),
             (("caption", str(run_dir), str(tmp_path / "absent.png")), "absent.png: no such picture"),
             (("caption", str(run_dir), str(text)), "notes.txt: not a picture this can read"),
             (("ask", str(run_dir), str(picture), " "), "the question is empty"),
             (("draw", str(tmp_path / "x.jpg")), "written as PNG")]
    for args, message in cases:
        assert message in fails(*args)
    config = json.loads((run_dir / "config.json").read_text())
    broken = tmp_path / "run-elsewhere"
    shutil.copytree(run_dir, broken)
    config["encoder"]["name"] = str(tmp_path / "missing-encoder")
    (broken / "config.json").write_text(json.dumps(config))
    assert "missing-encoder" in fails("caption", str(broken), str(picture), "--device", "cpu")
    assert "caption" in cli("--help").stdout and "--json" in cli("caption", "--help").stdout


def test_quick_look_trains_a_run_in_its_own_folder_and_the_readme_examples_use_it(tiny_models, tmp_path):
    """The README's first command at toy size: pictures, features, a stage-1 run and a captioned test picture, all
    under --out, whose run `frozenbridge caption` then uses as the README shows."""
    import yaml

    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({
        "vision": {"name": str(tiny_models["siglip"]), "layer": None},
        "language": {"name": str(tiny_models["qwen2"])},
        "shapes": {"data": {"image_size": 64}, "train": {"batch_size": 4}, "evaluate": {"caption_tokens": 6}}}))
    out = tmp_path / "quick"
    proc = cli("quick-look", "--params", str(params), "--out", str(out), "--train-pictures", "16",
               "--test-pictures", "3", "--steps", "2")
    scores = json.loads((out / "scores.json").read_text())
    assert (scores["of"], scores["steps"], scores["train_pictures"]) == (3, 2, 16)
    assert scores["exact_percent"] == round(100 * scores["exact"] / 3, 2)
    assert f"model wrote:   {scores['caption']}" in proc.stdout
    assert f"{scores['exact']} of 3 test captions exactly right" in proc.stdout
    assert (out / "look.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml", "quick"]  # nothing written elsewhere
    draw = cli("draw", "--seed", "3", "--image-size", "64", str(tmp_path / "picture.png"))
    assert draw.returncode == 0
    caption = json.loads(cli("caption", scores["model"], str(tmp_path / "picture.png"), "--json").stdout)
    assert caption[0]["picture"] == str(tmp_path / "picture.png")
    bad = cli("quick-look", "--params", str(params), "--out", str(out), "--steps", "0", check=False)
    assert (bad.returncode, bad.stderr.strip()) == (2, "error: --steps = 0 is too small; it must be at least 1")
