"""The lock-file bench (bench/lockfile.py): DVC's reads of dvc.lock with ruamel.yaml's C parser, which pyproject
names so DVC's bookkeeping between stages is not pure Python, give exactly what the pure-Python reader gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_c_parser_is_installed_and_reads_dvc_lock_as_pure_python_does():
    from ruamel.yaml import YAML
    from ruamel.yaml.main import CParser

    assert CParser is not None, "ruamel.yaml.clib is missing: DVC reads every lock in pure Python"
    text = (ROOT / "dvc.lock").read_text()
    assert YAML(typ="safe").load(text) == YAML(typ="safe", pure=True).load(text)


def test_the_bench_writes_both_rows_and_fails_on_a_missing_lock(tmp_path):
    lock = tmp_path / "dvc.lock"
    lock.write_text("schema: '2.0'\nstages:\n  a:\n    cmd: python a.py\n    deps:\n    - path: a.py\n      md5: 1\n")
    out = tmp_path / "rows.json"
    command = [sys.executable, "-m", "frozenbridge.bench", "lockfile", "--rounds", "1", "--out", str(out)]
    subprocess.run([*command, "--lock", str(lock)], check=True, capture_output=True, text=True)
    rows = json.loads(out.read_text())["rows"]
    assert [r["b"] for r in rows] == ["pure Python s", "round trip s, pure Python"]
    assert all(r["a_value"] > 0 and r["b_value"] > 0 for r in rows)
    missing = subprocess.run([*command, "--lock", str(tmp_path / "none.lock")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.strip().splitlines() == [
        f"error: --lock {tmp_path / 'none.lock'}: no such file (run it at the repo root, or name a dvc.lock)"]
