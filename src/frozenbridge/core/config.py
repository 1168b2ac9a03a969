"""A generic, field-driven validator for params.yaml: a study declares its sections as frozen dataclasses whose
fields carry a check (`field(default, check)`), and `parse` walks them.

Every error is one line naming the key, the value and what is allowed, so a typo fails before any work starts:
    params.yaml: train.lr = 5 is not allowed; expected a number in (0, 1]
    params.yaml: unknown key train.lerning_rate; allowed keys under train: batch_size, ...
Nested dataclass fields are sections; a class may add cross-field checks in a `validate(self, key)` method.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from frozenbridge.core.errors import FrozenbridgeError

Check = Callable[[Any, str], Any]  # (raw value, its key) -> the parsed value, or raises `fail(...)`


def fail(key: str, value: Any, allowed: str) -> FrozenbridgeError:
    return FrozenbridgeError(f"params.yaml: {key} = {value!r} is not allowed; expected {allowed}")


def field(default: Any, check: Check | None = None, raw: Any = None):
    """A dataclass field with the check its raw value goes through (sections, dataclasses, need none). `raw` is the
    default as params.yaml would spell it, where that differs from the parsed default (tuples read as lists)."""
    meta = {"check": check, "raw": raw}
    if dataclasses.is_dataclass(default):
        return dataclasses.field(default_factory=lambda: default, metadata=meta)
    if isinstance(default, (list, dict, set)):
        raise TypeError("params defaults must be immutable (use a tuple)")
    return dataclasses.field(default=default, metadata=meta)


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def check_keys(raw: Any, key: str, known: set[str]) -> dict:
    """`raw` is a mapping whose keys are all known (None reads as empty)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(key, raw, "a mapping")
    unknown = sorted(set(raw) - known)
    if unknown:
        where = f" under {key}" if key else ""
        raise FrozenbridgeError(f"params.yaml: unknown key {_join(key, unknown[0])}; allowed keys{where}: "
                                f"{', '.join(sorted(known))}")
    return raw


def parse(cls: type, raw: Any, key: str = "", also_allowed: tuple[str, ...] = ()):
    """An instance of the dataclass `cls` from a raw mapping: unknown keys refused (except `also_allowed`, keys
    that other studies own at the same level), missing keys take the field's default, each value checked."""
    fields = dataclasses.fields(cls)
    raw = check_keys(raw, key, {f.name for f in fields} | set(also_allowed))
    base = cls()
    values = {}
    for f in fields:
        default = getattr(base, f.name)
        sub = _join(key, f.name)
        if dataclasses.is_dataclass(default):
            values[f.name] = parse(type(default), raw.get(f.name), sub)
            continue
        spelled = f.metadata.get("raw")
        value = raw.get(f.name, _raw_default(default) if spelled is None else spelled)
        check = f.metadata.get("check")
        values[f.name] = check(value, sub) if check else value
    out = cls(**values)
    validate = getattr(out, "validate", None)
    if validate is not None:
        validate(key)
    return out


def _raw_default(default: Any) -> Any:
    """Defaults are stored parsed (tuples); checks expect what YAML gives (lists)."""
    return [_raw_default(v) for v in default] if isinstance(default, tuple) else default


# Checks: each returns a function (value, key) -> parsed value.

def _is_number(v: Any, kind: type) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) if kind is int else isinstance(v, (int, float))


def integer(minimum: int = 1) -> Check:
    def check(value, key):
        if not _is_number(value, int) or value < minimum:
            raise fail(key, value, f"an integer >= {minimum}")
        return value
    return check


def number(lo: float, hi: float) -> Check:
    """A number in (lo, hi]."""
    def check(value, key):
        if not _is_number(value, float) or not lo < value <= hi:
            raise fail(key, value, f"a number in ({lo:g}, {hi:g}]")
        return float(value)
    return check


def fraction() -> Check:
    """A number in [0, 1)."""
    def check(value, key):
        if not _is_number(value, float) or not 0 <= value < 1:
            raise fail(key, value, "a number in [0, 1)")
        return float(value)
    return check


def choice(*allowed: str) -> Check:
    def check(value, key):
        if value not in allowed:
            raise fail(key, value, f"one of {list(allowed)}")
        return value
    return check


def boolean() -> Check:
    def check(value, key):
        if not isinstance(value, bool):
            raise fail(key, value, "true or false")
        return value
    return check


def boolean_or(word: str) -> Check:
    """true, false or the one word `word` (e.g. auto)."""
    def check(value, key):
        if not isinstance(value, bool) and value != word:
            raise fail(key, value, f"true, false or {word}")
        return value
    return check


def text(allowed: str) -> Check:
    """A non-empty string; `allowed` says what it may name."""
    def check(value, key):
        if not isinstance(value, str) or not value.strip():
            raise fail(key, value, allowed)
        return value
    return check


def optional(inner: Check, allowed: str | None = None) -> Check:
    """null, or what `inner` accepts; with `allowed`, a bad value gets that message instead of inner's."""
    def check(value, key):
        if value is None:
            return None
        if allowed is None:
            return inner(value, key)
        try:
            return inner(value, key)
        except FrozenbridgeError:
            raise fail(key, value, allowed) from None
    return check


def span(kind: type, lo: float, hi: float) -> Check:
    """[min, max] with lo <= min <= max <= hi, as a tuple of `kind`."""
    def check(value, key):
        ok = (isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_number(v, kind) for v in value)
              and lo <= value[0] <= value[1] <= hi)
        if not ok:
            raise fail(key, value, f"[min, max] with {lo} <= min <= max <= {hi}")
        return (kind(value[0]), kind(value[1]))
    return check


def names(allowed: tuple[str, ...]) -> Check:
    """A non-empty list without repeats, each from `allowed`, as a tuple."""
    def check(value, key):
        if not isinstance(value, list) or not value or len(set(value)) != len(value):
            raise fail(key, value, f"a non-empty list without repeats, from {list(allowed)}")
        for i, v in enumerate(value):
            if v not in allowed:
                raise fail(f"{key}[{i}]", v, f"one of {list(allowed)}")
        return tuple(value)
    return check


def distinct_integers(example: str) -> Check:
    """A non-empty list of distinct integers >= 0, as a tuple."""
    def check(value, key):
        if not isinstance(value, list) or not value or len(set(value)) != len(value):
            raise fail(key, value, f"a non-empty list of distinct integers >= 0, e.g. {example}")
        return tuple(integer(0)(v, f"{key}[{i}]") for i, v in enumerate(value))
    return check


def integer_list(minimum: int, example: str, distinct: bool = False) -> Check:
    """A non-empty list of integers >= minimum (without repeats when `distinct`), as a tuple."""
    what = f"a non-empty list of {'distinct ' if distinct else ''}integers >= {minimum}, e.g. {example}"

    def check(value, key):
        if not isinstance(value, list) or not value or (distinct and len(set(value)) != len(value)):
            raise fail(key, value, what)
        return tuple(integer(minimum)(v, f"{key}[{i}]") for i, v in enumerate(value))
    return check


def valid_device_name(name: str) -> bool:
    return name in ("auto", "cpu", "cuda", "mps") or (name.startswith("cuda:") and name[5:].isdigit())


def device() -> Check:
    def check(value, key):
        if not isinstance(value, str) or not valid_device_name(value):
            raise fail(key, value, "auto, cpu, cuda, cuda:N or mps")
        return value
    return check


class YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader, reading `2e-3` as a number as YAML 1.2 (and DVC) do, not as the string '2e-3'."""


YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
               r"|[0-9][0-9_]*[eE][-+]?[0-9]+|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)$"),
    list("-+0123456789."))


def read_yaml(text: str):
    return yaml.load(text, Loader=YamlLoader)  # noqa: S506 (a SafeLoader)


def read_params_file(path: str | Path) -> Any:
    """The raw contents of a params file, or one clear line when it is missing or not YAML."""
    path = Path(path)
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: not found; run from the project root (where dvc.yaml is)")
    try:
        return read_yaml(path.read_text())
    except yaml.YAMLError as err:
        raise FrozenbridgeError(f"{path}: not valid YAML ({err})") from None
