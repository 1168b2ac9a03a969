"""Every dvc.yaml stage lists, as deps, the package folders and files its script runs, so no code change can leave
an output that `dvc repro` calls up to date.

Three checks: (1) the static import closure of each stage script (every import in stages/ and src/, lazy ones
inside functions included) is covered by the stage's deps (a file listed, or a folder above it); (2) no module of
the package or a stage loads code by name at run time (importlib.import_module, __import__, runpy), which the
closure could not follow, but for the benchmarks' entry point (frozenbridge.bench, which no stage imports or lists)
and the designs' registry (bridge/design.py, which loads `frozenbridge/designs/<shapes.connector.design>.py`: the
stages that build a design list that file through dvc.yaml's `${shapes.connector.design}`, read here from
params.yaml);
(3) the modules a stage really loaded while it ran (recorded by an import hook in the
tiny pipeline of tests/test_pipeline.py, see `covered_at_run_time`) are covered too. A package `__init__.py` that
holds only a docstring needs no listing: it cannot change what a stage computes, and the check lists it the moment
it gains a statement.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "frozenbridge"
BENCH = SRC / PACKAGE / "bench"  # run by name from its __main__; outside every stage, as the check below keeps it
REGISTRY = SRC / PACKAGE / "bridge" / "design.py"  # loads the design params.yaml names, listed as a templated dep
# names that load code chosen at run time; importlib.metadata and importlib.resources read files, they import nothing
DYNAMIC = {("importlib", "import_module"), ("importlib", "__import__"), ("importlib.util", "spec_from_file_location"),
           ("importlib.util", "module_from_spec"), ("runpy", "run_module"), ("runpy", "run_path"),
           ("builtins", "__import__"), ("", "__import__"), ("", "exec")}


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


def dynamic_loads(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line name` (the file relative to `root`) for every call that loads code by a name computed at run
    time."""
    tree = ast.parse(path.read_text())
    aliases = {}  # local name -> (module, attribute) from `from importlib import import_module as im`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = (node.module, a.name)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute):
            owner = ast.unparse(f.value)
            key = (owner, f.attr)
        elif isinstance(f, ast.Name):
            key = aliases.get(f.id, ("", f.id))
        else:
            continue
        if key in DYNAMIC:
            found.append(f"{path.relative_to(root)}:{node.lineno} {'.'.join(k for k in key if k)}")
    return found


def docstring_only(path: Path) -> bool:
    """An __init__.py whose body is at most a docstring: importing it runs nothing."""
    body = ast.parse(path.read_text()).body
    return path.name == "__init__.py" and all(
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str) for n in body)


def stage_deps(dvc_yaml: Path = ROOT / "dvc.yaml") -> dict[str, tuple[Path, list[str]]]:
    """Stage name -> (its script, its deps as written), foreach/matrix bodies included."""
    stages = yaml.safe_load(dvc_yaml.read_text())["stages"]
    out = {}
    for name, stage in stages.items():
        body = stage.get("do", stage)
        script = re.search(r"python (stages/\S+\.py)", body["cmd"]).group(1)
        out[name] = (ROOT / script, body.get("deps", []))
    return out


def resolved(dep: str, params: dict | None = None) -> str | None:
    """A dep as DVC reads it: `${shapes.connector.design}` from params.yaml; None for a matrix's `${item...}`."""
    if "${item" in dep:
        return None
    if "${shapes.connector.design}" in dep:
        params = params or yaml.safe_load((ROOT / "params.yaml").read_text())
        dep = dep.replace("${shapes.connector.design}", params["shapes"]["connector"]["design"])
    return dep


def uncovered(files, deps: list[str]) -> list[str]:
    """The files no dep covers (the file itself, or a folder above it); docstring-only __init__.py files excepted."""
    listed = [ROOT / d for d in map(resolved, deps) if d is not None]
    return sorted(str(p.relative_to(ROOT)) for p in files
                  if not docstring_only(p) and not any(p == d or d in p.parents for d in listed))


def missing_deps(script: Path, deps: list[str]) -> list[str]:
    return uncovered(closure(script), deps)


def covered_at_run_time(loaded: dict[str, list[str]], dvc_yaml: Path) -> dict[str, list[str]]:
    """Stage -> the package files it loaded while running that its deps do not cover. `loaded` maps a stage
    script's path (relative to the project, as in dvc.yaml) to the package files its processes imported."""
    gaps = {}
    for name, (script, deps) in stage_deps(dvc_yaml).items():
        files = [ROOT / "src" / f for f in loaded.get(str(script.relative_to(ROOT)), [])]
        if missing := uncovered(files, deps):
            gaps[name] = missing
    return gaps


def test_every_stage_lists_the_package_folders_it_imports():
    gaps = {name: missing for name, (script, deps) in stage_deps().items()
            if (missing := missing_deps(script, deps))}
    assert not gaps, f"dvc.yaml deps lack files the stage imports: {gaps}"


def test_every_stage_lists_its_script():
    assert all(str(script.relative_to(ROOT)) in deps for script, deps in stage_deps().values())


def test_nothing_loads_code_by_name():
    """The closure above follows import statements; code loaded by a name computed at run time would escape it."""
    found = [hit for folder in (SRC, ROOT / "stages") for path in sorted(folder.rglob("*.py"))
             if BENCH not in path.parents and path != REGISTRY for hit in dynamic_loads(path)]
    assert not found, f"dynamic imports the deps check cannot follow: {found}"


def test_a_removed_folder_is_caught():
    script, deps = stage_deps()["shapes_evaluate"]
    assert "src/frozenbridge/shapes/training" in deps
    missing = missing_deps(script, [d for d in deps if d != "src/frozenbridge/shapes/training"])
    assert missing and all(m.startswith("src/frozenbridge/shapes/training/") for m in missing)
    assert "src/frozenbridge/shapes/training/split_data.py" in missing


def test_a_dynamic_import_is_caught(tmp_path):
    """A stage that loads a module by name: the scan names the call, and the run-time record names the file."""
    script = tmp_path / "sneaky.py"
    script.write_text("import importlib\n\nfigures = importlib.import_module('frozenbridge.shapes.summary.figures')\n"
                      "from importlib import import_module as im\nim('frozenbridge.core.seeds')\n")
    assert [hit.split(" ")[1] for hit in dynamic_loads(script, tmp_path)] == ["importlib.import_module",
                                                                             "importlib.import_module"]
    assert closure(script) == {script}  # the static closure cannot see it: the name is a string
    loaded = {"stages/shapes/summarize.py": ["frozenbridge/shapes/summary/figures.py", "frozenbridge/core/seeds.py",
                                             "frozenbridge/shapes/report/tables.py"]}
    gaps = covered_at_run_time(loaded, ROOT / "dvc.yaml")
    assert gaps == {"shapes_summarize": ["src/frozenbridge/shapes/report/tables.py"]}


def test_the_closure_follows_relative_lazy_and_package_imports():
    found = {str(p.relative_to(ROOT)) for p in closure(ROOT / "stages" / "shapes" / "train.py")}
    assert {"stages/shapes/train.py", "src/frozenbridge/__init__.py", "src/frozenbridge/shapes/training/run.py",
            "src/frozenbridge/core/backbones/__init__.py", "src/frozenbridge/core/backbones/language.py"} <= found
    assert not any("/tools/" in f or "/report/" in f or "/bench/" in f for f in found)  # nor tools, report, bench


def test_the_stages_that_build_a_design_list_the_one_params_yaml_names():
    """bridge/design.py loads `designs/<name>.py` by name (the one dynamic import besides the benchmarks'): every
    stage whose code reaches the registry lists the chosen design's file through `${shapes.connector.design}`; the
    one-token study and the capacity check, which always train the MLP, list designs/mlp.py (the capacity stage is
    frozen, and `dvc unfreeze` cannot rewrite a stage with `${}` in it), and so does the audit, which trains the MLP
    too."""
    assert [hit.split(" ")[1] for hit in dynamic_loads(REGISTRY)] == ["importlib.import_module"]
    for name, (script, deps) in stage_deps().items():
        if REGISTRY not in closure(script):
            continue
        wanted = "src/frozenbridge/designs/mlp.py" if name.startswith(("onetoken", "audit")) or name == "shapes_capacity" \
            else \
            "src/frozenbridge/designs/${shapes.connector.design}.py"
        assert wanted in deps or name == "shapes_codebook", (name, deps)


def test_a_new_design_file_is_in_no_stage_deps():
    """A design added as one file reruns nothing of the default run: no dep covers designs/ as a folder, and the
    templated dep resolves to the design params.yaml names."""
    new = SRC / PACKAGE / "designs" / "toy.py"
    for name, (script, deps) in stage_deps().items():
        listed = [ROOT / d for d in map(resolved, deps) if d is not None]
        assert not any(d == new or d in new.parents for d in listed), name


def test_no_stage_imports_or_lists_the_benchmarks():
    """frozenbridge.bench loads a benchmark by its name, which the closure cannot follow: so no stage may reach it.
    A change to a benchmark reruns no stage."""
    assert BENCH.is_dir() and dynamic_loads(BENCH / "__main__.py")  # the exception the scan above makes
    for name, (script, deps) in stage_deps().items():
        listed = [ROOT / d for d in deps if "${" not in d]
        assert not [d for d in listed if d == BENCH or d in BENCH.parents or BENCH in d.parents], name
        assert not [p for p in closure(script) if BENCH in p.parents], name


def test_report_code_is_in_no_stage_deps():
    """A change to a report or table module reruns no stage: no stage lists tools/ (but for headline's own module)
    or any study's report/ folder, and none imports them."""
    allowed = ROOT / "src/frozenbridge/tools/headline.py"
    for name, (script, deps) in stage_deps().items():
        assert not any("/report" in d for d in deps), name
        assert all(d == "src/frozenbridge/tools/headline.py" or "/tools" not in d for d in deps), name
        imported = [p for p in closure(script) if p != allowed and not docstring_only(p)
                    and ("report" in p.parts or "tools" in p.parts)]
        assert not imported, (name, imported)


def test_summaries_and_figures_run_without_torch():
    """The light stages read the study's vocabulary, not the training code: they start with torch unimportable."""
    import subprocess
    import sys

    block = "import sys, runpy; sys.modules['torch'] = None; sys.argv = [sys.argv[1], '--help']; " \
            "runpy.run_path(sys.argv[0], run_name='__main__')"
    for script in ("stages/shapes/summarize.py", "stages/shapes/figures.py", "stages/shapes/data.py",
                   "stages/headline.py"):
        proc = subprocess.run([sys.executable, "-c", block, script], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and "usage:" in proc.stdout, (script, proc.stderr[-500:])
