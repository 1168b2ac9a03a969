"""Every dvc.yaml stage lists, as deps, the project files its command imports (the import closure within stages/ and
src/, read from the code), so no code change can leave an output that `dvc repro` calls up to date."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "frozenbridge"


def module_file(module: str) -> Path | None:
    """The file a dotted module name of the package loads from, or None if it is not the package's."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    base = SRC.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Dotted names of the package's modules that `path` imports, at any depth in the file (lazy imports count)."""
    is_package = path.name == "__init__.py"
    here = module_name(path).split(".") if path.is_relative_to(SRC) else []
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = here if is_package else here[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return out


def closure(script: Path) -> set[Path]:
    """Project files a stage script runs: itself, every package module it imports, and their packages' __init__s."""
    seen: set[Path] = set()
    todo = [script]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in imported_modules(path):
            parts = module.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ first
                found = module_file(".".join(parts[:i]))
                if found is not None:
                    todo.append(found)
    return seen


def stage_deps() -> dict[str, tuple[Path, list[str]]]:
    """Stage name -> (its script, its deps as written), foreach/matrix bodies included."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = {}
    for name, stage in stages.items():
        body = stage.get("do", stage)
        script = re.search(r"python (stages/\S+\.py)", body["cmd"]).group(1)
        out[name] = (ROOT / script, body.get("deps", []))
    return out


def missing_deps(script: Path, deps: list[str]) -> list[str]:
    listed = [ROOT / d for d in deps]
    return sorted(str(p.relative_to(ROOT)) for p in closure(script)
                  if not any(p == d or d in p.parents for d in listed))


def test_every_stage_lists_the_project_files_it_imports():
    gaps = {name: missing for name, (script, deps) in stage_deps().items()
            if (missing := missing_deps(script, deps))}
    assert not gaps, f"dvc.yaml deps lack files the stage imports: {gaps}"


def test_a_removed_dependency_is_caught():
    script, deps = stage_deps()["evaluate"]
    assert "src/frozenbridge/bridge/model.py" in deps
    assert missing_deps(script, [d for d in deps if d != "src/frozenbridge/bridge/model.py"]) == [
        "src/frozenbridge/bridge/model.py"]


def test_the_closure_follows_relative_lazy_and_package_imports():
    found = {str(p.relative_to(ROOT)) for p in closure(ROOT / "stages" / "train.py")}
    assert {"stages/train.py", "src/frozenbridge/__init__.py", "src/frozenbridge/shapes/train.py",
            "src/frozenbridge/core/backbones/__init__.py", "src/frozenbridge/core/backbones/language.py"} <= found
    assert "src/frozenbridge/bench.py" not in found  # nothing imports the benchmark into a stage


def test_summaries_and_figures_run_without_torch():
    """The light stages read the study's vocabulary, not the training code: they start with torch unimportable."""
    import subprocess
    import sys

    block = "import sys, runpy; sys.modules['torch'] = None; sys.argv = [sys.argv[1], '--help']; " \
            "runpy.run_path(sys.argv[0], run_name='__main__')"
    for script in ("stages/summarize.py", "stages/figures.py", "stages/generate.py"):
        proc = subprocess.run([sys.executable, "-c", block, script], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and "usage:" in proc.stdout, (script, proc.stderr[-500:])
