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


def test_save_refuses_a_folder_without_metrics(tmp_path):
    with pytest.raises(FrozenbridgeError, match="no params.yaml and metrics"):
        save("x", tmp_path, tmp_path / "params.yaml", tmp_path / "results")
    assert not (tmp_path / "results" / "x").exists()
