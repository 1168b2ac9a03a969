"""python -m frozenbridge.bench NAME [options]: run one benchmark; with no name, list them.

A benchmark is a module of this package with a `main(argv)` function; its docstring's first line describes it.
Adding one is adding a file. Modules without a `main` (rows, parts, processes) are the benchmarks' helpers.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import frozenbridge.bench as package


def benchmarks() -> dict[str, str]:
    """Every benchmark's name and the first line of its docstring, read from the modules' source: nothing is
    imported, so the list comes without loading torch, and running one imports that one alone."""
    found = {}
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            doc = (ast.get_docstring(tree) or "").strip()
            found[path.stem] = doc.splitlines()[0] if doc else ""
    return found


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    names = benchmarks()
    if not argv or argv[0] in ("-h", "--help", "--list"):
        usage, what = __doc__.strip().splitlines()[0].split(": ", 1)
        print(f"usage: {usage}\n\n{what[0].upper()}{what[1:]}\n\nbenchmarks:")
        for name, line in names.items():
            print(f"  {name:<12} {line}")
        print("\n`python -m frozenbridge.bench NAME --help` explains one.")
        return
    if argv[0] not in names:
        print(f"error: no benchmark {argv[0]!r}; choose one of: {', '.join(names)}", file=sys.stderr)
        sys.exit(2)
    importlib.import_module(f"{package.__name__}.{argv[0]}").main(argv[1:])


if __name__ == "__main__":
    main()
