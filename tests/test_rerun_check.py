"""tools.rerun_check on a fixture DVC project of four small stages (no models: the tool is about hashes, not
training): a stage that repeats passes, one that writes the time fails and is named with the field that moved, a
dependency missing from the cache is one line and exit 2, and another CPU's lock is judged by the reruns alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frozenbridge.tools.rerun_check import json_fields

STAGES = {
    "make.py": "from pathlib import Path\nPath('data').mkdir(exist_ok=True)\n"
               "Path('data/raw.txt').write_text('\\n'.join(str(i * i) for i in range(50)) + '\\n')\n",
    "count.py": "import json, os\nfrom pathlib import Path\nrows = Path('data/raw.txt').read_text().split()\n"
                "Path('out').mkdir(exist_ok=True)\nPath('metrics').mkdir(exist_ok=True)\n"
                "salt = os.environ.get('TINY_SALT', '')\n"
                "Path('out/count.json').write_text(json.dumps({'rows': len(rows), 'salt': salt}, indent=1))\n"
                "Path('metrics/count.json').write_text(json.dumps({'sum': sum(map(int, rows))}))\n",
    "noisy.py": "import json, time\nfrom pathlib import Path\nrows = Path('data/raw.txt').read_text().split()\n"
                "Path('out').mkdir(exist_ok=True)\nPath('out/noisy').mkdir(exist_ok=True)\n"
                "Path('out/noisy/fixed.txt').write_text('\\n'.join(rows))\n"
                "items = [{'row': r, 'when': time.time_ns() if i == 3 else 0} for i, r in enumerate(rows)]\n"
                "Path('out/noisy/result.json').write_text(json.dumps({'items': items}, indent=1))\n",
}
DVC_YAML = """stages:
  make: {cmd: python make.py, deps: [make.py], outs: [data/raw.txt]}
  count:
    cmd: python count.py
    deps: [count.py, data/raw.txt]
    outs: [out/count.json]
    metrics: [metrics/count.json: {cache: false}]
  noisy: {cmd: python noisy.py, deps: [noisy.py, data/raw.txt], outs: [out/noisy]}
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The fixture project after its first `dvc repro`, committed with its dvc.lock."""
    root = tmp_path_factory.mktemp("rerun") / "project"
    root.mkdir()
    for name, text in {**STAGES, "dvc.yaml": DVC_YAML, ".gitignore": "/data\n/out\n"}.items():
        (root / name).write_text(text)
    for cmd in (["git", "init", "-q"], [sys.executable, "-m", "dvc", "init", "-q"],
                [sys.executable, "-m", "dvc", "config", "core.analytics", "false"],
                [sys.executable, "-m", "dvc", "repro", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture"]):
        assert _run(cmd, root).returncode == 0, cmd
    return root


@pytest.fixture()
def project(built, tmp_path) -> Path:
    """This test's own copy of the built project (a test may empty its cache or commit)."""
    dest = tmp_path / "project"
    shutil.copytree(built, dest, symlinks=True)
    return dest


def check(project: Path, *args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "frozenbridge.tools.rerun_check", *args, "--out", "report.json"], project)


def _cache(project: Path) -> list[Path]:
    return sorted((project / ".dvc" / "cache").rglob("*"))


def test_a_stage_that_repeats_passes(project):
    before = _cache(project)
    done = check(project, "count", "--times", "2", "--threads", "1", "--compile-cache", "cold")
    assert done.returncode == 0, done.stderr
    assert "  out/count.json (count): same" in done.stdout
    assert "  metrics/count.json (count): same" in done.stdout  # a cache: false output is compared too
    assert "repeats: every rerun matched dvc.lock" in done.stdout
    report = json.loads((project / "report.json").read_text())
    assert report["repeats"] and len(report["reruns"]) == 2 and report["conditions"]["threads"] == "1"
    assert report["conditions"]["compile_cache"].startswith("cold")
    assert _cache(project) == before  # the copy wrote to its own cache and run cache, not this one's


def test_a_stage_that_writes_the_time_fails_and_is_named(project):
    done = check(project, "noisy", "--times", "2", "--after", "count")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    moved = [line for line in lines if line.startswith("  out/noisy (noisy): differs")]
    assert len(moved) == 3  # against the lock twice, then between the reruns
    assert all("result.json: 1 of" in line and "items[].when 1 of 50" in line for line in moved)
    assert "fixed.txt" not in done.stdout  # the file that repeats is not named
    assert "  out/count.json (count): same" in lines  # --after's stage ran first and is compared too
    assert "DOES NOT REPEAT" in done.stdout
    report = json.loads((project / "report.json").read_text())
    pair = report["between"][0]["outputs"]["out/noisy"]
    assert pair["files"]["result.json"]["fields"] == {"items[].when": "1 of 50"}


def test_a_dependency_missing_from_the_cache_is_one_line_and_exit_2(project):
    shutil.rmtree(project / ".dvc" / "cache")
    done = check(project, "count")
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()
    assert error == [f"error: count read data/raw.txt, not in this checkout's DVC cache ({project / '.dvc/cache'}): "
                     "run `dvc repro make` (or `dvc pull`) here first"]
    unknown = check(project, "nosuch")
    assert unknown.returncode == 2 and "nosuch: not a stage in dvc.lock at HEAD" in unknown.stderr


def test_a_lock_from_another_cpu_is_judged_by_the_reruns(project):
    """Where bench/repro.json names another CPU, a difference from the lock is expected (bf16 kernels differ
    between CPUs), and reruns that agree with each other pass; on the lock's own machine the same run fails."""
    (project / "bench").mkdir()
    (project / "bench/repro.json").write_text(json.dumps({"machine": {"cpu_model": "Another CPU",
                                                                      "bf16_path": "AMX + AVX512-BF16"}}))
    _run(["git", "add", "bench"], project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "timed elsewhere"], project)
    done = check(project, "count", "--times", "2", "--env", "TINY_SALT=x")
    assert done.returncode == 0, done.stderr
    assert "lock's machine: Another CPU (AMX + AVX512-BF16)" in done.stdout
    assert "not expected to match dvc.lock across CPUs" in done.stdout
    assert "  out/count.json (count): differs (the file: 1 of 4 lines differ; salt 1 of 1)" in done.stdout
    assert "repeats: the reruns matched each other" in done.stdout
    shutil.rmtree(project / "bench")
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "no timing"], project)
    assert check(project, "count", "--env", "TINY_SALT=x").returncode == 1


def test_json_fields_counts_what_moved_per_field():
    a = {"loss": 0.5, "captions": [{"floor": "a", "trained": "b"}, {"floor": "c", "trained": "d"}], "n": float("nan")}
    b = {"loss": 0.5, "captions": [{"floor": "x", "trained": "b"}, {"floor": "c", "trained": "d"}], "n": float("nan")}
    assert json_fields(a, b) == {"captions[].floor": "1 of 2"}
    assert json_fields({"h": [1, 2]}, {"h": [1, 2, 3]}) == {"h[]": "1 of 3"}
