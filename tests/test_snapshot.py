"""An on-demand experiment's metrics kept under results/ with the params it changed, and rendered in the README."""

import json

import pytest
import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.report.tables import experiment_results
from frozenbridge.tools.snapshot import changed_params, save


def test_changed_params_names_every_differing_key():
    base = {"seed": 0, "recipes": ["caption", "qa"], "train": {"lr": 0.001, "steps": 10}}
    exp = {"seed": 0, "recipes": ["caption", "qa", "caption_qa_lora"], "train": {"lr": 0.01, "steps": 10},
           "extra": {"k": 1}}
    assert changed_params(exp, base) == {"extra.k": 1, "recipes": ["caption", "qa", "caption_qa_lora"],
                                         "train.lr": 0.01}
    assert changed_params(base, base) == {}


def test_save_copies_metrics_and_renders(tmp_path):
    work = tmp_path / "exp"
    (work / "metrics" / "shapes").mkdir(parents=True)
    (work / "params.yaml").write_text(yaml.safe_dump({"seed": 0,
                                                      "shapes": {"recipes": ["caption", "caption_qa_lora"]}}))
    text = {"base": 37.5, "passage_tokens": 389, "runs": {"caption_qa_lora": {"0": {
        "perplexity": 37.4, "equals_base": False, "lora": True}}}}
    (work / "metrics" / "shapes" / "text.json").write_text(json.dumps(text))
    base = tmp_path / "params.yaml"
    base.write_text(yaml.safe_dump({"seed": 0, "shapes": {"recipes": ["caption"]}}))
    out = save("lora", work, base, tmp_path / "results")
    saved = json.loads((out / "experiment.json").read_text())
    assert saved["params_changed"] == {"shapes.recipes": ["caption", "caption_qa_lora"]}
    assert saved["command"] == "dvc exp run -S 'shapes.recipes=[caption,caption_qa_lora]'"
    assert (out / "metrics" / "shapes" / "text.json").is_file()  # each study's folder kept
    lines = "\n".join(experiment_results(out))
    assert "| caption_qa_lora | 0 | 37.4 | yes |" in lines and "results/lora/" in lines  # an old text.json
    new = {**text, "base_digest": "abc", "runs": {"caption_qa_lora": {"0": {
        "perplexity": 37.4, "rebuilt_perplexity": 37.4, "equals_base": False, "weights_unchanged": False,
        "started_from_base": True, "lora": True}}}}
    (out / "metrics" / "shapes" / "text.json").write_text(json.dumps(new))
    lines = "\n".join(experiment_results(out))
    assert "| caption_qa_lora | 0 | 37.4 | no | no | 37.4 | yes |" in lines and "digest abc" in lines


def test_save_keeps_only_the_metrics_named_and_the_note(tmp_path):
    work = tmp_path / "exp"
    (work / "metrics" / "shapes").mkdir(parents=True)
    (work / "params.yaml").write_text(yaml.safe_dump({"language": {"name": "qwen.gguf"}}))
    for name in ("scores.json", "text.json"):
        (work / "metrics" / "shapes" / name).write_text("{}")
    base = tmp_path / "params.yaml"
    base.write_text(yaml.safe_dump({"language": {"name": "smollm2-135m"}}))
    out = save("qwen", work, base, tmp_path / "results", only=["shapes/scores.json"], note="ran here in 90 min")
    assert sorted(p.name for p in (out / "metrics" / "shapes").iterdir()) == ["scores.json"]
    assert json.loads((out / "experiment.json").read_text())["note"] == "ran here in 90 min"
    with pytest.raises(FrozenbridgeError, match="shapes/probes.json not under"):
        save("qwen", work, base, tmp_path / "results", only=["shapes/probes.json"])



def test_a_kept_folder_appears_with_its_extra_files_or_not_at_all(tmp_path):
    """comparison keeps a replicate's design.json this way: a sitting stopped while it is written must not
    leave the replicate's metrics without it, looking kept."""
    work = tmp_path / "exp"
    (work / "metrics" / "shapes").mkdir(parents=True)
    (work / "params.yaml").write_text("seed: 0\n")
    (work / "metrics" / "shapes" / "scores.json").write_text("{}")
    base = tmp_path / "params.yaml"
    base.write_text("seed: 0\n")
    out = save("mlp/replicates/3", work, base, tmp_path / "results", files={"design.json": {"replicate": 3}})
    assert json.loads((out / "design.json").read_text()) == {"replicate": 3}
    with pytest.raises(TypeError):  # what cannot be written stops the folder from appearing, with its metrics
        save("mlp/replicates/4", work, base, tmp_path / "results", files={"design.json": {"step": object()}})
    assert not (tmp_path / "results" / "mlp" / "replicates" / "4").exists()
    assert sorted(p.name for p in (tmp_path / "results" / "mlp" / "replicates").iterdir()) == ["3"]

def test_save_refuses_a_folder_without_metrics(tmp_path):
    with pytest.raises(FrozenbridgeError, match="no params.yaml and metrics"):
        save("x", tmp_path, tmp_path / "params.yaml", tmp_path / "results")
    assert not (tmp_path / "results" / "x").exists()


def _scores(caption_seen: list[float]) -> dict:
    """A scores.json holding the caption recipe's seen-pair exact match, median and range of the given replicates."""
    s = sorted(caption_seen)
    return {"caption": {"seen": {"caption": {"right": {"median": s[len(s) // 2], "min": s[0], "max": s[-1]}}}}}


def test_an_experiment_with_another_language_model_is_tabled_beside_the_default_run(tmp_path):
    from frozenbridge.tools.headline_tables import backbone_table

    root = tmp_path
    (root / "metrics" / "shapes").mkdir(parents=True)
    (root / "metrics" / "shapes" / "scores.json").write_text(json.dumps(_scores([70.0, 75.0, 80.0])))
    (root / "params.yaml").write_text(yaml.safe_dump({"vision": {"name": "efficientnet-lite0"},
                                                      "language": {"name": "smollm2-135m"}}))
    for name, changed in (("other-lm", {"language.name": "/models/qwen.gguf"}), ("lr", {"shapes.train.lr": 0.01})):
        folder = root / "results" / name
        (folder / "metrics" / "shapes").mkdir(parents=True)
        (folder / "metrics" / "shapes" / "scores.json").write_text(json.dumps(_scores([40.0, 55.0])))
        (folder / "experiment.json").write_text(json.dumps({"name": name, "params_changed": changed,
                                                            "command": "dvc exp run", "commit": "abc"}))
    table = backbone_table(root / "results" / "other-lm", root)
    assert "| measure | default run | language.name = qwen.gguf | reference |" in table
    row = next(line for line in table if line.startswith("| captions exactly right, seen pairs"))
    assert row == "| captions exactly right, seen pairs (caption) | 75% [70–80] | 55% [40–55] | 75.8% (91 of 120) |"
    assert "efficientnet-lite0 + smollm2-135m" in table[0]
    assert backbone_table(root / "results" / "lr", root) == []  # same backbones: no such table
