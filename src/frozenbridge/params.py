"""One typed view of params.yaml, validated once, up front, by every stage.

Every error names the key, the value and what is allowed, so a typo fails before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from .data.scene import COLORS, KINDS
from .errors import FrozenbridgeError

FEATURE_KINDS = ("patches", "pooled")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")


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
        return cls(
            seed=_int(raw.get("seed", base.seed), "data.seed", minimum=0),
            image_size=_int(raw.get("image_size", base.image_size), "data.image_size", minimum=32),
            shapes=_range(raw.get("shapes", list(base.shapes)), "data.shapes", int, 1, 9),
            shape_size=_range(raw.get("shape_size", list(base.shape_size)), "data.shape_size", float, 0.05, 0.5),
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


@dataclass(frozen=True)
class Params:
    seed: int = 0
    data: DataParams = DataParams()
    vision: VisionParams = VisionParams()
    language: LanguageParams = LanguageParams()

    @classmethod
    def parse(cls, raw: Any) -> "Params":
        raw = _section(raw, "", cls)
        return cls(
            seed=_int(raw.get("seed", 0), "seed", minimum=0),
            data=DataParams.parse(raw.get("data")),
            vision=VisionParams.parse(raw.get("vision")),
            language=LanguageParams.parse(raw.get("language")),
        )


def load_params(path: str | Path = "params.yaml") -> Params:
    path = Path(path)
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: not found; run from the project root (where dvc.yaml is)")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise FrozenbridgeError(f"{path}: not valid YAML ({err})") from None
    return Params.parse(raw)
