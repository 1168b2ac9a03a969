"""The sweep's plan: which settings each design trains at and how its own best is picked, written in a file before
any run, so the pick cannot be chosen after the numbers are seen.

A plan file (results/connectors/sweep/plan.yaml by default) declares every key; none has a default:

    threshold: 60                  # percent exact the picking rule counts steps to, in (0, 100]
    every: 50                      # a learning-curve point every N steps
    cap: 1200                      # the most steps a run trains: a multiple of `every`
    flat: {checks: 4, gain: 2.0, after: 600}   # stop early once the last 4 points' best is less than 2 points
                                   # above the best before, but never before step 600 (a curve may sit at 0 a while)
    rule: fewest_steps_then_best_at_cap
    extend: 2                      # the most times a design's grid grows past an edge of its pick (extend.py); 0: never
    grids:                         # per design, its settings: dotted keys under params.yaml's shapes: section
      mlp: [{train.lr: 1.0e-4}, {train.lr: 3.0e-4}]
      cross_attention: [{train.lr: 1.0e-3, connector.cross_attention.gate_init: 0.5}]

A setting's values are numbers, words, true/false or null. Each setting is named by its keys and values, sorted by key
(`gate_init=0.5,lr=0.001`): the last part of each dotted key, or as many parts as keep it apart from the design's
other keys. A bad file fails with one line naming the file, the key and what is allowed. `plan_digest` is a short hash
of the plan's content (not of its comments or key order) that each row records. `extend` is left out of it: a setting
added past an edge is a row of its own under the same plan, and the rows already made stay valid.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Union

from frozenbridge.core.config import check_keys, choice, fail, integer, number, read_params_file
from frozenbridge.core.errors import FrozenbridgeError

DEFAULT_PATH = Path("results/connectors/sweep/plan.yaml")
RULES = ("fewest_steps_then_best_at_cap",)  # the picking rules pick.py implements: a plan may name no other
KEYS = ("threshold", "every", "cap", "flat", "rule", "extend", "grids")
FLAT_KEYS = ("checks", "gain", "after")
SETTING = "a non-empty mapping of dotted keys under params.yaml's shapes: section to values, e.g. {train.lr: 0.001}"
VALUE = "a number, a word (letters, digits, _ . + -), true, false or null"

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_DESIGN = re.compile(r"[A-Za-z0-9_-]+")
_WORD = re.compile(r"[A-Za-z0-9_.+-]+")  # words only, so that names stay apart and can name a folder

Value = Union[int, float, str, bool, None]


@dataclass(frozen=True)
class Setting:
    """One entry of a design's grid: its name and its values, (dotted key under shapes:, value) sorted by key."""
    name: str
    values: tuple[tuple[str, Value], ...]

    def as_dict(self) -> dict[str, Value]:
        return dict(self.values)


@dataclass(frozen=True)
class Plan:
    threshold: float  # percent exact
    every: int  # steps between curve points
    cap: int  # most steps a run trains
    checks: int  # flat: points looked back over
    gain: float  # flat: the least rise, in points, that counts as still improving
    after: int  # flat: no run stops early for a flat curve before this step (100% exact stops it at any step)
    rule: str
    grids: tuple[tuple[str, tuple[Setting, ...]], ...]  # (design, its settings), in the file's order
    extend: int = 0  # the most times a design's grid grows past an edge of its pick (extend.py)
    source: str = str(DEFAULT_PATH)  # the file it was read from, for messages; not part of the digest

    @property
    def designs(self) -> tuple[str, ...]:
        return tuple(design for design, _ in self.grids)

    def grid(self, design: str) -> tuple[Setting, ...]:
        for name, settings in self.grids:
            if name == design:
                return settings
        raise FrozenbridgeError(f"{self.source}: no grid for design {design!r}; the plan sweeps: "
                                f"{', '.join(self.designs)}")


def load_plan(path: str | Path = DEFAULT_PATH) -> Plan:
    """The plan in `path`, every key checked; one line naming the file and the key when anything is wrong."""
    raw = read_params_file(path)
    with _in_file(path):
        raw = check_keys(raw, "", set(KEYS))
        _require(raw, KEYS, "")
        flat = check_keys(raw["flat"], "flat", set(FLAT_KEYS))
        _require(flat, FLAT_KEYS, "flat.")
        every = integer(1)(raw["every"], "every")
        cap = integer(1)(raw["cap"], "cap")
        if cap % every:
            raise fail("cap", cap, f"a multiple of every ({every})")
        return Plan(threshold=number(0, 100)(raw["threshold"], "threshold"), every=every, cap=cap,
                    checks=integer(1)(flat["checks"], "flat.checks"), gain=number(0, 100)(flat["gain"], "flat.gain"),
                    after=integer(0)(flat["after"], "flat.after"),
                    rule=choice(*RULES)(raw["rule"], "rule"), extend=integer(0)(raw["extend"], "extend"),
                    grids=_grids(raw["grids"]), source=str(path))


def plan_digest(plan: Plan) -> str:
    """12 hex digits of a hash of what the plan declares: the same for the same plan however it is spelled."""
    content = {"threshold": plan.threshold, "every": plan.every, "cap": plan.cap, "rule": plan.rule,
               "flat": {"checks": plan.checks, "gain": plan.gain, "after": plan.after},
               "grids": {design: sorted([s.name, [list(kv) for kv in s.values]] for s in settings)
                         for design, settings in plan.grids}}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]


def slug(values: dict[str, Value], labels: dict[str, str] | None = None) -> str:
    """A setting's name: `label=value` pairs sorted by key, joined by commas; labels default to each key's last part."""
    labels = labels or short_labels(set(values))
    return ",".join(f"{labels[k]}={spell(v)}" for k, v in sorted(values.items()))


def short_labels(keys: set[str]) -> dict[str, str]:
    """Each dotted key's shortest tail of parts that no other key ends with (the whole key when none is)."""
    out = {}
    for key in keys:
        parts = key.split(".")
        out[key] = key
        for n in range(1, len(parts) + 1):
            if not any(other != key and other.split(".")[-n:] == parts[-n:] for other in keys):
                out[key] = ".".join(parts[-n:])
                break
    return out


@contextmanager
def _in_file(path: str | Path) -> Iterator[None]:
    """The config checks' messages name params.yaml: name the plan file instead."""
    try:
        yield
    except FrozenbridgeError as err:
        message = str(err).removeprefix("params.yaml: ")
        raise FrozenbridgeError(f"{path}: {message}") from None


def _require(raw: dict, keys: tuple[str, ...], prefix: str) -> None:
    missing = [k for k in keys if k not in raw]
    if missing:
        raise FrozenbridgeError(f"params.yaml: missing key {prefix}{missing[0]}; a plan declares every one of "
                                f"{', '.join(prefix + k for k in keys)} before any run")


def _grids(raw) -> tuple[tuple[str, tuple[Setting, ...]], ...]:
    if not isinstance(raw, dict) or not raw:
        raise fail("grids", raw, "a mapping of design names to non-empty lists of settings")
    for design in raw:
        if not isinstance(design, str) or not _DESIGN.fullmatch(design):
            raise fail("grids", design, "design names of letters, digits, _ and -")
    return tuple((design, _grid(entries, f"grids.{design}")) for design, entries in raw.items())


def _grid(raw, key: str) -> tuple[Setting, ...]:
    if not isinstance(raw, list) or not raw:
        raise fail(key, raw, f"a non-empty list of settings, each {SETTING}")
    entries = [_entry(entry, f"{key}[{i}]") for i, entry in enumerate(raw)]
    labels = short_labels({k for entry in entries for k in entry})
    settings: list[Setting] = []
    seen: dict[tuple, int] = {}
    names: dict[str, int] = {}
    for i, entry in enumerate(entries):
        same = tuple(sorted((k, _canonical(v)) for k, v in entry.items()))
        if same in seen:
            raise fail(f"{key}[{i}]", raw[i], f"a setting not already in the grid (it repeats {key}[{seen[same]}])")
        name = slug(entry, labels)
        if name in names:
            raise fail(f"{key}[{i}]", raw[i], f"a setting named apart from {key}[{names[name]}] ({name}): spell the "
                                              "values so they differ")
        seen[same], names[name] = i, i
        settings.append(Setting(name, tuple(sorted(entry.items()))))
    return tuple(settings)


def _entry(raw, key: str) -> dict[str, Value]:
    if not isinstance(raw, dict) or not raw:
        raise fail(key, raw, SETTING)
    for k, v in raw.items():
        if not isinstance(k, str) or not _DOTTED.fullmatch(k):
            raise fail(key, k, "keys that are dotted names under params.yaml's shapes: section, e.g. train.lr")
        ok = (v is None or isinstance(v, (bool, int)) or (isinstance(v, float) and math.isfinite(v))
              or (isinstance(v, str) and _WORD.fullmatch(v)))
        if not ok:
            raise fail(f"{key}.{k}", v, VALUE)
    return dict(raw)


def _canonical(v: Value) -> tuple:
    """Equal settings compare equal: 1 and 1.0 are one number, true is not 1."""
    if v is None or isinstance(v, str):
        return ("word", v)
    if isinstance(v, bool):
        return ("bool", v)
    return ("number", float(v))


def spell(v: Value) -> str:
    """A value as a setting's name writes it (floats as Python's shortest exact form: 0.001, 1e-05)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)
