"""One typed view of params.yaml, validated once, up front, by every stage.

Every error names the key, the value and what is allowed, so a typo fails before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
import re
from pathlib import Path
from typing import Any

import yaml

from .data.draw import most_that_fit
from .data.scene import COLORS, KINDS
from .errors import FrozenbridgeError

FEATURE_KINDS = ("patches", "pooled")
RECIPE_NAMES = ("caption", "qa", "caption_qa", "caption_qa_lora", "caption_qa_mix")
PRECISIONS = ("auto", "bf16", "fp32")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")
ORDERS = ("rows", "columns")
SCHEDULES = ("constant", "cosine")


def _fail(key: str, value: Any, allowed: str) -> FrozenbridgeError:
    return FrozenbridgeError(f"params.yaml: {key} = {value!r} is not allowed; expected {allowed}")


def _section(raw: Any, key: str, cls: type) -> dict:
    """Check a mapping has only the keys the dataclass knows; fill the rest from defaults."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _fail(key, raw, "a mapping")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise FrozenbridgeError(
            f"params.yaml: unknown key {key + '.' if key else ''}{unknown[0]}; allowed keys"
            f"{' under ' + key if key else ''}: {', '.join(sorted(known))}"
        )
    return raw


def _int(value: Any, key: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(key, value, f"an integer >= {minimum}")
    return value


def _number(v: Any, kind: type) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) if kind is int else isinstance(v, (int, float))


def _range(value: Any, key: str, kind: type, lo: float, hi: float) -> tuple:
    ok = (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(_number(v, kind) for v in value)
        and lo <= value[0] <= value[1] <= hi
    )
    if not ok:
        raise _fail(key, value, f"[min, max] with {lo} <= min <= max <= {hi}")
    return (kind(value[0]), kind(value[1]))


def parse_pair(text: str, key: str) -> tuple[str, str]:
    """'red triangle' -> ('red', 'triangle'), checking both words."""
    parts = text.split() if isinstance(text, str) else []
    if len(parts) != 2 or parts[0] not in COLORS or parts[1] not in KINDS:
        raise _fail(key, text, f"'<color> <kind>' with color in {list(COLORS)} and kind in {list(KINDS)}")
    return parts[0], parts[1]


@dataclass(frozen=True)
class SplitSizes:
    train: int = 1500
    test_seen: int = 120
    test_heldout: int = 120

    @classmethod
    def parse(cls, raw: Any, key: str) -> "SplitSizes":
        raw = _section(raw, key, cls)
        base = cls()
        return cls(**{f.name: _int(raw.get(f.name, getattr(base, f.name)), f"{key}.{f.name}") for f in fields(cls)})


@dataclass(frozen=True)
class DataParams:
    seed: int = 0
    image_size: int = 224
    shapes: tuple[int, int] = (2, 4)
    shape_size: tuple[float, float] = (0.18, 0.26)
    held_out: tuple[tuple[str, str], ...] = (("red", "triangle"), ("green", "circle"), ("blue", "square"))
    sizes: SplitSizes = SplitSizes()

    @classmethod
    def parse(cls, raw: Any) -> "DataParams":
        raw = _section(raw, "data", cls)
        base = cls()
        held = raw.get("held_out", [" ".join(p) for p in base.held_out])
        if not isinstance(held, list):
            raise _fail("data.held_out", held, "a list like ['red triangle', 'green circle']")
        pairs = tuple(parse_pair(p, f"data.held_out[{i}]") for i, p in enumerate(held))
        for kind in KINDS:
            if all((c, kind) in pairs for c in COLORS):
                raise _fail("data.held_out", held, f"a list that leaves at least one color of every kind ({kind})")
        for color in COLORS:
            if all((color, k) in pairs for k in KINDS):
                raise _fail("data.held_out", held, f"a list that leaves at least one kind of every color ({color})")
        image_size = _int(raw.get("image_size", base.image_size), "data.image_size", minimum=32)
        shapes = _range(raw.get("shapes", list(base.shapes)), "data.shapes", int, 1, 9)
        shape_size = _range(raw.get("shape_size", list(base.shape_size)), "data.shape_size", float, 0.05, 0.5)
        fit = most_that_fit(image_size, shape_size[0])
        if shapes[1] > fit:
            raise _fail("data.shapes", list(shapes), f"at most {fit} shapes: no more fit a {image_size}px picture "
                        f"without overlap when the smallest is {shape_size[0]} of its side (data.shape_size)")
        return cls(
            seed=_int(raw.get("seed", base.seed), "data.seed", minimum=0),
            image_size=image_size,
            shapes=shapes,
            shape_size=shape_size,
            held_out=pairs,
            sizes=SplitSizes.parse(raw.get("sizes"), "data.sizes"),
        )


@dataclass(frozen=True)
class VisionParams:
    name: str = "efficientnet-lite0"
    features: str = "patches"
    layer: int | None = 10
    dtype: str = "float16"
    batch_size: int = 32

    @classmethod
    def parse(cls, raw: Any) -> "VisionParams":
        raw = _section(raw, "vision", cls)
        base = cls()
        name = raw.get("name", base.name)
        if not isinstance(name, str) or not name.strip():
            raise _fail("vision.name", name, "'efficientnet-lite0', a Hugging Face model id or a local directory")
        features = raw.get("features", base.features)
        if features not in FEATURE_KINDS:
            raise _fail("vision.features", features, f"one of {list(FEATURE_KINDS)}")
        layer = raw.get("layer", base.layer)
        if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int)):
            raise _fail("vision.layer", layer, "an integer block/layer index, or null for the encoder's final output")
        dtype = raw.get("dtype", base.dtype)
        if dtype not in FEATURE_DTYPES:
            raise _fail("vision.dtype", dtype, f"one of {list(FEATURE_DTYPES)}")
        return cls(name=name, features=features, layer=layer, dtype=dtype,
                   batch_size=_int(raw.get("batch_size", base.batch_size), "vision.batch_size"))


@dataclass(frozen=True)
class LanguageParams:
    name: str = "smollm2-135m"

    @classmethod
    def parse(cls, raw: Any) -> "LanguageParams":
        raw = _section(raw, "language", cls)
        name = raw.get("name", cls.name)
        if not isinstance(name, str) or not name.strip():
            raise _fail("language.name", name, "'smollm2-135m', a Hugging Face model id or a local directory")
        return cls(name=name)


def _float(value: Any, key: str, lo: float, hi: float) -> float:
    if not _number(value, float) or not lo < value <= hi:
        raise _fail(key, value, f"a number in ({lo:g}, {hi:g}]")
    return float(value)


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise _fail(key, value, f"one of {list(allowed)}")
    return value


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(key, value, "true or false")
    return value


def _fraction(value: Any, key: str) -> float:
    if not _number(value, float) or not 0 <= value < 1:
        raise _fail(key, value, "a number in [0, 1)")
    return float(value)


@dataclass(frozen=True)
class ConnectorParams:
    merge: int = 2  # k: each k x k block of neighbouring patches becomes one token (1 = no merge)
    hidden: int | None = None  # width of the MLP's hidden layer; null = the language model's width
    prefix_tokens: int = 1  # tokens made from a pooled vector
    order: str = "columns"  # image tokens column by column (left to right) or row by row
    norm: bool = False  # LayerNorm on the connector's input
    positions: bool = True  # a learned vector per image token, added to its output
    init_scale: float = 1.0  # the last layer's initial weights are multiplied by this

    @classmethod
    def parse(cls, raw: Any) -> "ConnectorParams":
        raw = _section(raw, "connector", cls)
        base = cls()
        get = lambda k: raw.get(k, getattr(base, k))  # noqa: E731
        hidden = get("hidden")
        if get("order") not in ORDERS:
            raise _fail("connector.order", get("order"), f"one of {list(ORDERS)}")
        return cls(merge=_int(get("merge"), "connector.merge"),
                   hidden=None if hidden is None else _int(hidden, "connector.hidden"),
                   prefix_tokens=_int(get("prefix_tokens"), "connector.prefix_tokens"),
                   order=get("order"), norm=_bool(get("norm"), "connector.norm"),
                   positions=_bool(get("positions"), "connector.positions"),
                   init_scale=_float(get("init_scale"), "connector.init_scale", 0, 10))


@dataclass(frozen=True)
class TrainParams:
    batch_size: int = 16
    lr: float = 1e-3
    # learning-rate schedules: stage 1 and qa (phases that start from a random connector), then the question phase
    # that follows captions; constant, or cosine decay to a tenth of lr, after a linear warmup over a fraction
    stage1_schedule: str = "constant"
    stage1_warmup: float = 0.0
    stage2_schedule: str = "cosine"
    stage2_warmup: float = 0.1
    stage1_steps: int = 200
    stage2_steps: int = 150
    mix_captions: int = 4  # captions added to each stage-2 batch of the caption_qa_mix recipe
    lora_rank: int = 8
    lora_alpha: int = 16
    lora_lr: float = 1e-4
    precision: str = "auto"  # auto: bf16 where the hardware has it (CPU bf16 instructions, CUDA), else fp32
    checkpoint_every: int = 20  # steps between checkpoints (0 = none); a killed run resumes from the last one
    compile: bool = False  # torch.compile each decoder layer of the frozen model for training (needs a C++ compiler)

    @classmethod
    def parse(cls, raw: Any) -> "TrainParams":
        raw = _section(raw, "train", cls)
        base = cls()
        get = lambda k: raw.get(k, getattr(base, k))  # noqa: E731
        precision = get("precision")
        if precision not in PRECISIONS:
            raise _fail("train.precision", precision, f"one of {list(PRECISIONS)}")
        return cls(
            batch_size=_int(get("batch_size"), "train.batch_size"),
            lr=_float(get("lr"), "train.lr", 0, 1),
            stage1_schedule=_choice(get("stage1_schedule"), "train.stage1_schedule", SCHEDULES),
            stage1_warmup=_fraction(get("stage1_warmup"), "train.stage1_warmup"),
            stage2_schedule=_choice(get("stage2_schedule"), "train.stage2_schedule", SCHEDULES),
            stage2_warmup=_fraction(get("stage2_warmup"), "train.stage2_warmup"),
            stage1_steps=_int(get("stage1_steps"), "train.stage1_steps"),
            stage2_steps=_int(get("stage2_steps"), "train.stage2_steps"),
            mix_captions=_int(get("mix_captions"), "train.mix_captions"),
            lora_rank=_int(get("lora_rank"), "train.lora_rank"),
            lora_alpha=_int(get("lora_alpha"), "train.lora_alpha"),
            lora_lr=_float(get("lora_lr"), "train.lora_lr", 0, 1),
            precision=precision,
            checkpoint_every=_int(get("checkpoint_every"), "train.checkpoint_every", minimum=0),
            compile=_bool(get("compile"), "train.compile"),
        )


@dataclass(frozen=True)
class EvaluateParams:
    items: int = 60  # items per task and test set (captions: pictures; questions: of each type)
    batch_size: int = 32
    caption_tokens: int = 28  # most new tokens for a caption
    answer_tokens: int = 4  # most new tokens for an answer

    @classmethod
    def parse(cls, raw: Any) -> "EvaluateParams":
        raw = _section(raw, "evaluate", cls)
        base = cls()
        return cls(**{f.name: _int(raw.get(f.name, getattr(base, f.name)), f"evaluate.{f.name}") for f in fields(cls)})


def _names(value: Any, key: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or len(set(value)) != len(value):
        raise _fail(key, value, f"a non-empty list without repeats, from {list(allowed)}")
    for i, v in enumerate(value):
        if v not in allowed:
            raise _fail(f"{key}[{i}]", v, f"one of {list(allowed)}")
    return tuple(value)


def _replicates(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or len(set(value)) != len(value):
        raise _fail("replicates", value, "a non-empty list of distinct integers >= 0, e.g. [0, 1]")
    return tuple(_int(v, f"replicates[{i}]", minimum=0) for i, v in enumerate(value))


def valid_device_name(name: str) -> bool:
    return name in ("auto", "cpu", "cuda") or (name.startswith("cuda:") and name[5:].isdigit())


def _device(value: Any) -> str:
    if not isinstance(value, str) or not valid_device_name(value):
        raise _fail("device", value, "auto, cpu, cuda or cuda:N")
    return value


@dataclass(frozen=True)
class Params:
    seed: int = 0
    device: str = "auto"  # auto: $FROZENBRIDGE_DEVICE if set, else CUDA when available, else CPU
    replicates: tuple[int, ...] = (0, 1)
    recipes: tuple[str, ...] = ("caption", "qa", "caption_qa")
    data: DataParams = DataParams()
    vision: VisionParams = VisionParams()
    language: LanguageParams = LanguageParams()
    connector: ConnectorParams = ConnectorParams()
    train: TrainParams = TrainParams()
    evaluate: EvaluateParams = EvaluateParams()

    @classmethod
    def parse(cls, raw: Any) -> "Params":
        raw = _section(raw, "", cls)
        return cls(
            seed=_int(raw.get("seed", 0), "seed", minimum=0),
            device=_device(raw.get("device", cls.device)),
            replicates=_replicates(raw.get("replicates", list(cls.replicates))),
            recipes=_names(raw.get("recipes", list(cls.recipes)), "recipes", RECIPE_NAMES),
            data=DataParams.parse(raw.get("data")),
            vision=VisionParams.parse(raw.get("vision")),
            language=LanguageParams.parse(raw.get("language")),
            connector=ConnectorParams.parse(raw.get("connector")),
            train=TrainParams.parse(raw.get("train")),
            evaluate=EvaluateParams.parse(raw.get("evaluate")),
        )


def check_replicate(params: Params, replicate: int) -> int:
    """A stage's --replicate must be one of params.yaml's replicates."""
    if replicate not in params.replicates:
        raise FrozenbridgeError(f"--replicate {replicate} is not in params.yaml replicates {list(params.replicates)}")
    return replicate


class YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader, reading `2e-3` as a number as YAML 1.2 (and DVC) do, not as the string '2e-3'."""


YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
               r"|[0-9][0-9_]*[eE][-+]?[0-9]+|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)$"),
    list("-+0123456789."))


def read_yaml(text: str):
    return yaml.load(text, Loader=YamlLoader)  # noqa: S506 (a SafeLoader)


def load_params(path: str | Path = "params.yaml") -> Params:
    path = Path(path)
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: not found; run from the project root (where dvc.yaml is)")
    try:
        raw = read_yaml(path.read_text())
    except yaml.YAMLError as err:
        raise FrozenbridgeError(f"{path}: not valid YAML ({err})") from None
    return Params.parse(raw)
