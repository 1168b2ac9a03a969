"""params.yaml is validated up front: every bad value names its key and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dataclasses import dataclass

from frozenbridge.core.config import field, integer, parse
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.params import Params, load_params

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_params_parse_to_the_defaults():
    assert load_params(ROOT / "params.yaml") == Params()


@pytest.mark.parametrize("patch, message", [
    ({"dta": {}}, "unknown key dta"),
    ({"data": {"sede": 1}}, "unknown key data.sede"),
    ({"data": {"shapes": [3, 1]}}, "data.shapes = [3, 1]"),
    ({"data": {"image_size": 0}}, "data.image_size = 0"),
    ({"data": {"sizes": {"train": -5}}}, "data.sizes.train = -5"),
    ({"data": {"held_out": ["pink triangle"]}}, "data.held_out[0] = 'pink triangle'"),
    ({"data": {"held_out": ["red circle", "red square", "red triangle"]}}, "at least one kind of every color"),
    ({"vision": {"features": "cls"}}, "vision.features = 'cls'"),
    ({"vision": {"dtype": "int8"}}, "vision.dtype = 'int8'"),
    ({"vision": {"layer": "last"}}, "vision.layer = 'last'"),
    ({"vision": {"batch_size": 0}}, "vision.batch_size = 0"),
    ({"seed": -1}, "seed = -1"),
    ({"recipes": ["qa", "captions"]}, "recipes[1] = 'captions'"),
    ({"train": {"lr": 5}}, "train.lr = 5"),
    ({"train": {"lr": 0}}, "train.lr = 0"),
    ({"train": {"stage1_steps": 0}}, "train.stage1_steps = 0"),
    ({"train": {"batch_size": -2}}, "train.batch_size = -2"),
    ({"train": {"precision": "fp16"}}, "train.precision = 'fp16'"),
    ({"train": {"checkpoint_every": -1}}, "train.checkpoint_every = -1"),
    ({"train": {"lerning_rate": 0.1}}, "unknown key train.lerning_rate"),
    ({"evaluate": {"items": 0}}, "evaluate.items = 0"),
    ({"data": {"held_out": ["red hexagon"]}}, "data.held_out[0] = 'red hexagon'"),
    ({"data": {"shapes": [2, 9], "shape_size": [0.3, 0.4]}}, "data.shapes = [2, 9] is not allowed; expected at most 7"),
    ({"data": {"shapes": [1, 4], "shape_size": [0.5, 0.5]}}, "data.shapes = [1, 4] is not allowed; expected at most 3"),
    ({"connector": {"merge": 0}}, "connector.merge = 0"),
    ({"device": "tpu"}, "device = 'tpu' is not allowed; expected auto, cpu, cuda or cuda:N"),
    ({"device": "cuda:x"}, "device = 'cuda:x'"),
    ({"connector": {"order": "diagonal"}}, "connector.order = 'diagonal' is not allowed; expected one of ['rows'"),
    ({"connector": {"positions": "yes"}}, "connector.positions = 'yes' is not allowed; expected true or false"),
    ({"connector": {"init_scale": 0}}, "connector.init_scale = 0 is not allowed; expected a number in (0, 10]"),
    ({"train": {"stage2_schedule": "linear"}}, "train.stage2_schedule = 'linear' is not allowed; expected one of ['constant'"),
    ({"train": {"stage1_warmup": 1.5}}, "train.stage1_warmup = 1.5 is not allowed; expected a number in [0, 1)"),
    ({"train": {"compile": "auto"}}, "train.compile = 'auto' is not allowed; expected true or false"),
])
def test_bad_params_name_the_key(tmp_path, patch, message):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(raw.get(key), dict):
            for k, v in value.items():
                raw[key][k] = {**raw[key][k], **v} if isinstance(v, dict) and isinstance(raw[key].get(k), dict) else v
        else:
            raw[key] = value
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(FrozenbridgeError) as info:
        load_params(path)
    assert message in str(info.value) and str(info.value).startswith("params.yaml")


def test_exponent_numbers_read_as_numbers(tmp_path):
    """`lr: 2e-3` is a number in YAML 1.2 (and to DVC's -S), not the string PyYAML's 1.1 rules would make it."""
    path = tmp_path / "params.yaml"
    path.write_text((ROOT / "params.yaml").read_text().replace("\n  lr: ", "\n  lr: 2e-3 #"))
    assert load_params(path).train.lr == 0.002


@dataclass(frozen=True)
class ToySection:
    epochs: int = field(24, integer())
    hidden: int = field(64, integer())


@dataclass(frozen=True)
class Toy:
    """A second study as a later one adds it: its own section (and the shared seed), checked by the core."""

    seed: int = field(0, integer(0))
    toy: ToySection = field(ToySection())


def test_a_second_study_adds_its_section_without_touching_the_core(tmp_path, monkeypatch):
    import frozenbridge.core.params as studies

    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["toy"] = {"epochs": 3, "hidden": 64}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(FrozenbridgeError, match="unknown key toy"):
        load_params(path)  # no study owns it yet
    monkeypatch.setitem(studies.STUDY_PARAMS, "toy", f"{__name__}:Toy")
    assert load_params(path) == Params()  # the shapes study lets the other study's section pass
    assert parse(Toy, raw, "", also_allowed=studies.top_level_keys()).toy == ToySection(3, 64)
    raw["toy"]["epochs"] = 0
    with pytest.raises(FrozenbridgeError, match=r"params.yaml: toy.epochs = 0 is not allowed; expected an "):
        parse(Toy, raw, "", also_allowed=studies.top_level_keys())
    raw["toy"] = {"epoch": 1}
    with pytest.raises(FrozenbridgeError, match="unknown key toy.epoch; allowed keys under toy: epochs, hidden"):
        parse(Toy, raw, "", also_allowed=studies.top_level_keys())
