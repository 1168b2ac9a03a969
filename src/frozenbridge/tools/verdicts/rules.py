"""How a claim of the references is judged here: rules declared before any number is read, one code for every row.

A claim is checked over cells (a recipe and task, a test set, a caption length...), each cell over its replicates.
A cell's verdict:

- `AtLeast(bound)` / `AtMost(bound)` / `Inside(low, high)` (one `Within` rule) / `Every(what)` (yes or no a run):
  a cell holds when each of its values (one a replicate, or one pooled over them where the metrics keep no
  replicate apart) passes, does not hold when none does, and is inconclusive when they disagree.
- `Ahead(expect)`: a paired comparison (metrics/shapes/paired.json, or per-replicate differences computed the same
  way): holds when the exact interval for the median paired difference lies on the expected side of zero with at
  least 90% coverage (the paired statistics' `supported`), does not hold when it lies on the other side, and is
  inconclusive otherwise (the interval includes zero, or too few replicates for 90%).
- `NoDifference(margin)`: holds when that interval, in points, lies within +-margin with at least 90% coverage, does
  not hold when it lies wholly outside, inconclusive otherwise.
- `Beats()`: one thing's replicates against another's, unpaired: holds when the first's lowest replicate is above
  the second's highest, does not hold when its highest is below the second's lowest, inconclusive when they overlap.

A claim holds when every cell holds, does not hold when any cell does not, and is inconclusive otherwise; the reason
names the cells. Each rule says in words what it checks, and the verdict table prints that sentence beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frozenbridge.shapes.summary.paired import CLAIM as _CLAIM
from frozenbridge.shapes.summary.paired import statistics_of

CLAIM = float(_CLAIM)

HOLDS, FAILS, OPEN = "holds", "does not hold", "inconclusive"


def _num(v: float) -> str:
    return f"{v:.4g}"


@dataclass(frozen=True)
class Cell:
    """One cell of a claim's evidence: replicate values, or a paired-statistics dict, or two ranges."""
    label: str
    values: tuple = ()
    paired: dict | None = None
    items: int = 0
    ranges: tuple = ()


def _threshold(cell: Cell, passes) -> tuple[str, str]:
    ok = [passes(v) for v in cell.values]
    if all(ok):
        return HOLDS, ""
    if not any(ok):
        return FAILS, f"{cell.label}: {', '.join(_num(v) for v in cell.values)}"
    return OPEN, f"{cell.label}: its values disagree ({', '.join(_num(v) for v in cell.values)})"


@dataclass(frozen=True)
class Within:
    """Each value at least `low` and at most `high` (either may be left open)."""
    low: float | None = None
    high: float | None = None
    unit: str = ""

    @property
    def text(self) -> str:
        if self.high is None:
            return f"each value at least {_num(self.low)}{self.unit}"
        if self.low is None:
            return f"each value at most {_num(self.high)}{self.unit}"
        return f"each value inside [{_num(self.low)}, {_num(self.high)}]{self.unit}"

    def cell(self, cell: Cell) -> tuple[str, str]:
        return _threshold(cell, lambda v: (self.low is None or v >= self.low) and (self.high is None or v <= self.high))


def AtLeast(bound: float, unit: str = "") -> Within:  # noqa: N802 (reads as the rule it builds)
    return Within(low=bound, unit=unit)


def AtMost(bound: float, unit: str = "") -> Within:  # noqa: N802
    return Within(high=bound, unit=unit)


def Inside(low: float, high: float, unit: str = "") -> Within:  # noqa: N802
    return Within(low, high, unit)


@dataclass(frozen=True)
class Every:
    """Cells of yes/no values (one a run): holds when every value is yes."""
    what: str

    @property
    def text(self) -> str:
        return f"every run: {self.what}"

    def cell(self, cell: Cell) -> tuple[str, str]:
        return _threshold(cell, bool)


def paired_cell(label: str, diffs: list[int], items: int) -> Cell:
    """A paired cell from per-replicate differences (first - second), with the paired study's statistics."""
    return Cell(label, paired={**statistics_of(diffs), "items": items}, items=items)


def replicates_for_claim() -> tuple[int, float]:
    """The fewest replicates whose [min, max] interval for the median covers CLAIM or more, and that coverage."""
    n = 1
    while 1 - 2 ** (1 - n) < CLAIM:
        n += 1
    return n, 1 - 2 ** (1 - n)


def _too_few() -> str:
    n, coverage = replicates_for_claim()
    return f": fewer than {CLAIM:.0%}; {n} replicates reach {100 * coverage:g}%"


def _interval(cell: Cell, points: bool = False) -> str:
    p = cell.paired
    scale = 100 / cell.items if points and cell.items else 1
    lo, hi = p["interval"]["low"] * scale, p["interval"]["high"] * scale
    unit = " points" if points else ""
    return (f"{cell.label}: interval [{lo:+.4g}, {hi:+.4g}]{unit} covers the median with "
            f"{100 * p['interval']['coverage']:g}%, {p['replicates']} replicate{'s' if p['replicates'] != 1 else ''}")


@dataclass(frozen=True)
class Ahead:
    expect: str  # "first" or "second": which side of the pair the claim says is ahead

    @property
    def text(self) -> str:
        return (f"the {self.expect} of the pair ahead: the exact interval for the median paired difference on that "
                f"side of zero, at {CLAIM:.0%} coverage or more")

    def cell(self, cell: Cell) -> tuple[str, str]:
        p = cell.paired
        if p["supported"] == self.expect:
            return HOLDS, ""
        if p["supported"] is not None:
            return FAILS, _interval(cell) + ", on the other side of zero"
        if p["interval"]["coverage"] < CLAIM:
            return OPEN, _interval(cell) + _too_few()
        return OPEN, _interval(cell) + ": it includes zero"


@dataclass(frozen=True)
class NoDifference:
    margin: float  # points

    @property
    def text(self) -> str:
        return (f"no consistent difference: the exact interval for the median paired difference within "
                f"±{_num(self.margin)} points, at {CLAIM:.0%} coverage or more")

    def cell(self, cell: Cell) -> tuple[str, str]:
        p = cell.paired
        scale = 100 / cell.items
        lo, hi = p["interval"]["low"] * scale, p["interval"]["high"] * scale
        if p["interval"]["coverage"] < CLAIM:
            return OPEN, _interval(cell, True) + _too_few()
        if -self.margin <= lo and hi <= self.margin:
            return HOLDS, ""
        if lo > self.margin or hi < -self.margin:
            return FAILS, _interval(cell, True) + f", wholly outside ±{_num(self.margin)}"
        return OPEN, _interval(cell, True) + f": it crosses ±{_num(self.margin)}"


@dataclass(frozen=True)
class Beats:
    @property
    def text(self) -> str:
        return "the first's lowest replicate above the second's highest, in every cell (unpaired ranges)"

    def cell(self, cell: Cell) -> tuple[str, str]:
        (a_lo, a_hi), (b_lo, b_hi) = cell.ranges
        if a_lo > b_hi:
            return HOLDS, ""
        if a_hi < b_lo:
            return FAILS, f"{cell.label}: [{_num(a_lo)}, {_num(a_hi)}] below [{_num(b_lo)}, {_num(b_hi)}]"
        return OPEN, f"{cell.label}: [{_num(a_lo)}, {_num(a_hi)}] overlaps [{_num(b_lo)}, {_num(b_hi)}]"


@dataclass
class Evidence:
    """What a claim's reader found: the cells, the sentence of our numbers, the file they came from; or, when the
    default run does not measure the claim and no saved result holds it, the command that does."""
    cells: list[Cell] = field(default_factory=list)
    ours: str = ""
    source: str = ""
    missing: str = ""  # the command that measures it, when nothing read holds the claim
    grounds: tuple = ()  # grounds.Ground of each paired cell's sides: their right scores beside their best control


def judge(rule, evidence: Evidence) -> tuple[str, str]:
    """(verdict, why) of a claim from its cells under `rule` (the module docstring says how cells combine)."""
    if evidence.missing:
        return OPEN, f"no metrics file here holds it: `{evidence.missing}` measures it"
    if not evidence.cells:
        return OPEN, "no cells in the metrics read"
    results = [rule.cell(c) for c in evidence.cells]
    failed = [why for v, why in results if v == FAILS]
    if failed:
        return FAILS, "; ".join(failed)
    unsure = [why for v, why in results if v == OPEN]
    if unsure:
        return OPEN, "; ".join(unsure)
    return HOLDS, f"all {len(results)} cells pass" if len(results) > 1 else "it passes"
