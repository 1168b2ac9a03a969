"""params.yaml is validated up front: every bad value names its key and what is allowed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from frozenbridge.core.config import field, integer, parse
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.params import Params, load_params

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_params_parse_to_the_defaults():
    assert load_params(ROOT / "params.yaml") == Params()


BAD = [  # (dotted key, value, what the one line says)
    ("dta", {}, "unknown key dta"),
    ("data", {"seed": 1}, "unknown key data"),  # the shapes study's data is under shapes:
    ("shapes.data.sede", 1, "unknown key shapes.data.sede"),
    ("shapes.data.shapes", [3, 1], "shapes.data.shapes = [3, 1]"),
    ("shapes.data.image_size", 0, "shapes.data.image_size = 0"),
    ("shapes.data.sizes.train", -5, "shapes.data.sizes.train = -5"),
    ("shapes.data.held_out", ["pink triangle"], "shapes.data.held_out[0] = 'pink triangle'"),
    ("shapes.data.held_out", ["red circle", "red square", "red triangle"], "at least one kind of every color"),
    ("vision.features", "cls", "vision.features = 'cls'"),
    ("vision.dtype", "int8", "vision.dtype = 'int8'"),
    ("vision.layer", "last", "vision.layer = 'last'"),
    ("vision.batch_size", 0, "vision.batch_size = 0"),
    ("seed", -1, "seed = -1"),
    ("shapes.recipes", ["qa", "captions"], "shapes.recipes[1] = 'captions'"),
    ("shapes.train.lr", 5, "shapes.train.lr = 5"),
    ("shapes.train.lr", 0, "shapes.train.lr = 0"),
    ("shapes.train.stage1_steps", 0, "shapes.train.stage1_steps = 0"),
    ("shapes.train.batch_size", -2, "shapes.train.batch_size = -2"),
    ("shapes.train.precision", "fp16", "shapes.train.precision = 'fp16'"),
    ("shapes.train.checkpoint_every", -1, "shapes.train.checkpoint_every = -1"),
    ("shapes.train.lerning_rate", 0.1, "unknown key shapes.train.lerning_rate"),
    ("shapes.evaluate.items", 0, "shapes.evaluate.items = 0"),
    ("shapes.data.held_out", ["red hexagon"], "shapes.data.held_out[0] = 'red hexagon'"),
    ("shapes.data", {"shapes": [2, 9], "shape_size": [0.3, 0.4]},
     "shapes.data.shapes = [2, 9] is not allowed; expected at most 7"),
    ("shapes.data", {"shapes": [1, 4], "shape_size": [0.5, 0.5]},
     "shapes.data.shapes = [1, 4] is not allowed; expected at most 3"),
    ("shapes.connector.mlp.merge", 0, "shapes.connector.mlp.merge = 0"),
    ("device", "tpu", "device = 'tpu' is not allowed; expected auto, cpu, cuda, cuda:N or mps"),
    ("device", "cuda:x", "device = 'cuda:x'"),
    ("shapes.connector.mlp.order", "diagonal",
     "shapes.connector.mlp.order = 'diagonal' is not allowed; expected one of ['rows'"),
    ("shapes.connector.mlp.positions", "yes",
     "shapes.connector.mlp.positions = 'yes' is not allowed; expected true or false"),
    ("shapes.connector.mlp.init_scale", 0,
     "shapes.connector.mlp.init_scale = 0 is not allowed; expected a number in (0, 10]"),
    ("shapes.connector.design", "perceiver", "shapes.connector.design = 'perceiver' is not allowed; expected one of "
                                             "['codebook', 'cross_attention', 'mlp', 'resampler']"),
    ("shapes.connector.cross_attention.gate_lr", 0, "shapes.connector.cross_attention.gate_lr = 0 is not allowed"),
    ("shapes.connector.resampler.depth", 0, "shapes.connector.resampler.depth = 0 is not allowed"),
    ("shapes.train.stage2_schedule", "linear",
     "shapes.train.stage2_schedule = 'linear' is not allowed; expected one of ['constant'"),
    ("shapes.train.stage1_warmup", 1.5, "shapes.train.stage1_warmup = 1.5 is not allowed; expected a number in [0, 1)"),
    ("shapes.train.compile", "yes", "shapes.train.compile = 'yes' is not allowed; expected true, false or auto"),
    ("shapes.train.compile", 1, "shapes.train.compile = 1 is not allowed; expected true, false or auto"),
]


def patched(key: str, value) -> dict:
    """params.yaml with `key` (dotted) set to `value`; a mapping value is merged into the section there."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    node = raw
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = {**node[last], **value} if isinstance(value, dict) and isinstance(node.get(last), dict) else value
    return raw


@pytest.mark.parametrize("key, value, message", BAD)
def test_bad_params_name_the_key(tmp_path, key, value, message):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(patched(key, value)))
    with pytest.raises(FrozenbridgeError) as info:
        load_params(path)
    assert message in str(info.value) and str(info.value).startswith("params.yaml")


def test_exponent_numbers_read_as_numbers(tmp_path):
    """`lr: 2e-3` is a number in YAML 1.2 (and to DVC's -S), not the string PyYAML's 1.1 rules would make it."""
    path = tmp_path / "params.yaml"
    path.write_text((ROOT / "params.yaml").read_text().replace("\n    lr: 1.0e-3", "\n    lr: 2e-3"))
    assert load_params(path).shapes.train.lr == 0.002


@dataclass(frozen=True)
class ToySection:
    epochs: int = field(24, integer())
    hidden: int = field(64, integer())


@dataclass(frozen=True)
class Toy:
    """A second study as a later one adds it: its own section (and the shared seed), checked by the core."""

    seed: int = field(0, integer(0))
    toy: ToySection = field(ToySection())


def test_a_second_study_adds_its_section_by_naming_it(tmp_path, monkeypatch):
    """A new study adds its section's name to core.params.STUDY_SECTIONS and its own Params; the others let it pass."""
    import frozenbridge.core.params as shared

    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["toy"] = {"epochs": 3, "hidden": 64}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(FrozenbridgeError, match="unknown key toy"):
        load_params(path)  # no study owns it yet
    monkeypatch.setattr(shared, "TOP_LEVEL_KEYS", (*shared.TOP_LEVEL_KEYS, "toy"))
    assert load_params(path) == Params()  # the shapes study lets the other study's section pass
    assert parse(Toy, raw, "", also_allowed=shared.TOP_LEVEL_KEYS).toy == ToySection(3, 64)
    raw["toy"]["epochs"] = 0
    with pytest.raises(FrozenbridgeError, match=r"params.yaml: toy.epochs = 0 is not allowed; expected an "):
        parse(Toy, raw, "", also_allowed=shared.TOP_LEVEL_KEYS)
    raw["toy"] = {"epoch": 1}
    with pytest.raises(FrozenbridgeError, match="unknown key toy.epoch; allowed keys under toy: epochs, hidden"):
        parse(Toy, raw, "", also_allowed=shared.TOP_LEVEL_KEYS)


def test_the_top_level_keys_are_exactly_what_the_studies_read():
    """core.params names every top-level key (no import of the studies needed to check a file); it must equal the
    union of the studies' own Params, and every study section must be some study's."""
    import dataclasses

    import frozenbridge.core.params as shared
    from frozenbridge.digits.params import Params as Digits
    from frozenbridge.onetoken.params import Params as OneToken
    from frozenbridge.audit.params import Params as Audit
    from frozenbridge.retrieval.params import Params as Retrieval

    read = [{f.name for f in dataclasses.fields(p)} for p in (Params, Digits, Retrieval, OneToken, Audit)]
    assert set().union(*read) == set(shared.TOP_LEVEL_KEYS)
    for section, fields in zip(("shapes", "digits", "retrieval", "onetoken", "audit"), read):
        assert section in fields and set(fields) - set(shared.SHARED_KEYS) <= set(shared.STUDY_SECTIONS)
