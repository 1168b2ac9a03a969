"""Imports only go down the layers: core (and testing) <- bridge <- designs <- the studies <- comparison <- tools <-
bench <- cli
(docs/architecture.md). A study imports another study only through its `interface.py`. Every import counts, lazy ones
inside functions too. The few that still run back up are listed in KNOWN, each as it stands; a new one fails, and
one fixed must leave the list (so it only shrinks)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "frozenbridge"
STUDIES = ("shapes", "digits", "retrieval", "onetoken", "audit")
RANK = {"core": 0, "testing": 0, "bridge": 1, "designs": 2, **{s: 3 for s in STUDIES}, "comparison": 4, "tools": 5, "bench": 6,
        "cli": 7}
# the imports that still run back up (issue 73 moves them): file -> the modules it imports from a layer above
KNOWN = {
    "bridge/design.py": {"frozenbridge.designs.design_names"},  # the design registry; the designs import bridge
    "comparison/sweep/__main__.py": {"frozenbridge.bench.rows"},  # the row format bench and the sweep share
    # the machine's name and benchmark step, a stage's replicate, the kept metrics: they go down to core (machine.py,
    # stage.py) together with issue 71's core/machine.py, since a change under core/ reruns every default stage
    "comparison/run.py": {"frozenbridge.tools.repro_timing", "frozenbridge.tools.snapshot",
                          "frozenbridge.tools.where_it_runs"},
    "comparison/workspace.py": {"frozenbridge.tools.where_it_runs"},
    "tools/forecast.py": {"frozenbridge.bench.parts"},
    "tools/report.py": {"frozenbridge.bench.rows"},
    "tools/repro_timing.py": {"frozenbridge.bench.parts"},
    "tools/rerun_check.py": {"frozenbridge.bench.allocator"},
}


def imported(source: str) -> list[str]:
    """Every frozenbridge module a source imports, at the top or inside a function; `from frozenbridge.x import y`
    counts as frozenbridge.x.y, so `from frozenbridge.shapes import interface` is an interface import."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [f"{node.module}.{a.name}" if node.module.count(".") == 1 else node.module for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return [name for name in out if name.startswith("frozenbridge.")]


def upward(path: str, source: str) -> set[str]:
    """The modules `source` (the file at `path` under src/frozenbridge/) imports against the layers."""
    me = path.split("/")[0]
    if me not in RANK:
        return set()
    bad = set()
    for name in imported(source):
        other = name.split(".")[1]
        if other not in RANK or other == me:
            continue
        across = RANK[other] == RANK[me] and not name.endswith(".interface")
        if RANK[other] > RANK[me] or across:
            bad.add(name)
    return bad


def found() -> dict[str, set[str]]:
    out = {}
    for f in sorted(SRC.rglob("*.py")):
        rel = f.relative_to(SRC).as_posix()
        if "/" in rel and (bad := upward(rel, f.read_text())):
            out[rel] = bad
    return out


def test_imports_go_down_the_layers_but_for_the_known_ones():
    assert found() == KNOWN


@pytest.mark.parametrize("path, source, bad", [
    ("core/planted.py", "from frozenbridge.bridge.model import VLM", {"frozenbridge.bridge.model"}),
    ("bridge/planted.py", "def f():\n    from frozenbridge.shapes.params import Params", {"frozenbridge.shapes.params"}),
    ("shapes/planted.py", "import frozenbridge.tools.report", {"frozenbridge.tools.report"}),
    ("digits/planted.py", "from frozenbridge.retrieval.training.run import train_run",
     {"frozenbridge.retrieval.training.run"}),
    ("onetoken/planted.py", "from frozenbridge.retrieval import interface", set()),
    ("tools/planted.py", "from frozenbridge.comparison.report.tables import designs", set()),
    ("shapes/planted.py", "from frozenbridge.comparison.settings import EQUAL_SETTINGS",
     {"frozenbridge.comparison.settings"}),
    ("comparison/planted.py", "from frozenbridge.tools.report import main", {"frozenbridge.tools.report"}),
])
def test_a_planted_upward_import_is_caught(path, source, bad):
    assert upward(path, source) == bad
