"""The allocator benchmark (frozenbridge.bench.allocator): each allocator's step against glibc's, whether its numbers
are glibc's bit for bit, and the activate hook setup.sh writes so the activated .venv preloads tcmalloc."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from frozenbridge.bench.allocator import GLIBC, main, rows_from

ROOT = Path(__file__).resolve().parents[1]


def run(step: float, weights: str = "w", captions: str = "c") -> dict:
    return {"step": step, "weights": weights, "captions": captions, "device": "cpu"}


def test_each_allocator_is_its_median_step_against_glibcs_and_says_whether_its_numbers_are_glibcs():
    results = {GLIBC: [run(0.74), run(0.71), run(0.76)], "tcmalloc": [run(0.64), run(0.65), run(0.69)],
               "jemalloc": [run(0.83), run(0.84, weights="other"), run(0.95)]}
    rows = {r["measure"]: r for r in rows_from(results)}
    assert rows["caption step, compiled layers, glibc malloc: median of 3 processes"]["a_value"] == 0.74
    tc = rows["caption step, compiled layers: tcmalloc against glibc malloc"]
    assert (tc["a_value"], tc["b_value"], round(tc["ratio"], 3)) == (0.65, 0.74, 1.138)
    assert rows["  tcmalloc: trained connector and captions the same bits as glibc's"]["a_value"] == 1.0
    assert rows["  jemalloc: trained connector and captions the same bits as glibc's"]["a_value"] == 0.0
    assert rows["caption step, compiled layers: jemalloc against glibc malloc"]["ratio"] < 1


def test_too_few_steps_or_rounds_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--steps", "3"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: --steps = 3")


def test_setup_writes_an_activate_hook_that_preloads_tcmalloc_once(tmp_path):
    """The hook setup.sh appends to .venv/bin/activate, run twice in one shell (activating again): tcmalloc is named
    once, before whatever the shell preloaded already."""
    text = (ROOT / "setup.sh").read_text()
    hook = text.split('cat >> .venv/bin/activate <<EOF\n', 1)[1].split("\nEOF\n", 1)[0]
    library = tmp_path / "libtcmalloc_minimal.so.4"
    written = subprocess.run(["bash", "-c", f"tcmalloc() {{ echo {library}; }}\ncat <<EOF\n{hook}\nEOF"],
                             capture_output=True, text=True, check=True).stdout
    activate = tmp_path / "activate"
    activate.write_text(written)
    shell = f'LD_PRELOAD=/other.so; . {activate}; . {activate}; echo "$LD_PRELOAD"'
    out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{library}:/other.so"
    assert "frozenbridge: tcmalloc" in written  # setup.sh's marker: a second setup.sh appends nothing


def test_a_timed_run_names_the_allocator_it_ran_on(monkeypatch):
    from frozenbridge.tools.repro_report import cpu_label
    from frozenbridge.tools.repro_timing import malloc

    monkeypatch.setenv("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")
    assert malloc() == "tcmalloc"
    monkeypatch.setenv("LD_PRELOAD", "")
    assert malloc() == "glibc malloc"
    m = {"cpu_model": "Intel(R) Xeon(R) Processor", "bf16_path": "AMX + AVX512-BF16"}
    assert cpu_label(m) == " (Intel(R) Xeon(R) Processor, bf16 through AMX + AVX512-BF16)"  # a timing from before
    assert cpu_label({**m, "malloc": "tcmalloc"}).endswith("bf16 through AMX + AVX512-BF16, tcmalloc)")
