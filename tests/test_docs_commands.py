"""Every command the README and the pages in docs/ show works on this checkout: a module run with `python -m`
exists and answers --help, a stage script exists, every `-S key=value` of a `dvc exp run` names a key params.yaml
has and gives it a value every study accepts, every stage named to dvc exists in dvc.yaml, and every
`frozenbridge` subcommand exists. Commands come from fenced code blocks and from inline code that starts with a
command; `<placeholders>` and CAPITALS are left alone."""

from __future__ import annotations

import copy
import re
import shlex
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
STARTS = ("python ", "dvc ", "frozenbridge ", ".venv/bin/python ", "./setup.sh")
VALUE_OPTIONS = {"-S", "--set-param", "-n", "--name", "-j", "--jobs", "-m", "--message", "-o", "--out", "--keep",
                 "--drop", "--sort-by", "-r", "--remote", "--rev", "--targets", "--html-template", "--num"}
def _cli_commands() -> tuple[str, ...]:
    """The subcommands `frozenbridge` has, read from its parser."""
    import argparse

    from frozenbridge.cli import parser

    (sub,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return tuple(sub.choices)


CLI_COMMANDS = _cli_commands()


def page_commands(text: str) -> list[str]:
    """Commands in fenced blocks (continuation lines joined, comments and prompts dropped) and inline code; an inline
    command followed by "on commit" is a record of what ran then (a kept experiment), not one to run today."""
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip().removeprefix("$ ")
            if line and not line.startswith("#"):
                out.append(line)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    out += [span for span in re.findall(r"`([^`\n]+)`(?! on commit)", prose) if span.startswith(STARTS)]
    return out


def simple_commands(line: str) -> list[list[str]]:
    """A shell line split at && ; | into argument lists (shell syntax beyond that is not checked)."""
    out = []
    for part in re.split(r"&&|;|\|\|?", line):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        while words and re.match(r"^\w+=", words[0]):  # ENV=value command
            words = words[1:]
        if words:
            out.append(words)
    return out


def placeholder(word: str) -> bool:
    """<stage>, NAME, ${VAR}, ...: a slot for the reader to fill, not a value to check."""
    return ("<" in word or ">" in word or "${" in word or word == "..."
            or re.fullmatch(r"[A-Z][A-Z0-9_]+", word) is not None)


def all_commands() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        for line in page_commands(page.read_text()):
            for words in simple_commands(line):
                if words[0].endswith("python") or words[0] in ("dvc", "frozenbridge"):
                    found.append((page.relative_to(ROOT).as_posix(), words))
    return found


COMMANDS = all_commands()


def positional(words: list[str]) -> list[str]:
    """The arguments that are not options or option values."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w in VALUE_OPTIONS:
            skip = True
        elif not w.startswith("-") and "=" not in w.split("/")[0]:
            out.append(w)
    return out


@lru_cache
def stage_names() -> set[str]:
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    return set(stages)


def known_stage(target: str) -> bool:
    name = target.split("@")[0].removeprefix("dvc.yaml:")
    return name in stage_names() or Path(ROOT / target).name == "dvc.yaml"


def apply_set_params(words: list[str]) -> dict:
    """params.yaml with the command's -S key=value applied; every key must already exist there."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    for flag, value in zip(words, words[1:]):
        if flag not in ("-S", "--set-param"):
            continue
        key, text = value.split("=", 1)
        node = raw
        *parents, leaf = key.removeprefix("params.yaml:").split(".")
        for part in parents:
            assert isinstance(node, dict) and part in node, f"unknown key {key}"
            node = node[part]
        assert isinstance(node, dict) and leaf in node, f"unknown key {key}"
        node[leaf] = yaml.safe_load(text)
    return raw


def test_the_pages_show_commands():
    pages = {page for page, _ in COMMANDS}
    assert "README.md" in pages and len(COMMANDS) > 20, pages


@pytest.mark.parametrize("page, words", [c for c in COMMANDS if c[1][:3] == ["dvc", "exp", "run"]],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v)[:80])
def test_exp_run_sets_keys_every_study_accepts(page, words):
    from frozenbridge.digits.params import Params as Digits
    from frozenbridge.onetoken.params import Params as OneToken
    from frozenbridge.retrieval.params import Params as Retrieval
    from frozenbridge.shapes.params import Params as Shapes

    if any(placeholder(w) for w in words):
        pytest.skip("a command with placeholders")
    raw = apply_set_params(words)
    for study in (Shapes, Digits, Retrieval, OneToken):
        study.parse(copy.deepcopy(raw))
    for target in positional(words[3:]):
        assert known_stage(target), f"{page}: {' '.join(words)}: no stage {target!r}"


@pytest.mark.parametrize("page, words", [c for c in COMMANDS if c[1][0] == "dvc" and len(c[1]) > 1
                                         and c[1][1] in ("repro", "freeze", "unfreeze", "status")],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v)[:80])
def test_dvc_names_stages_that_exist(page, words):
    targets = [t for t in positional(words[2:]) if not placeholder(t)]
    assert all(known_stage(t) for t in targets), f"{page}: {' '.join(words)}"


def python_modules() -> set[str]:
    """The package's modules the pages run with `python -m`; the benchmarks' entry point with the benchmark named
    (`frozenbridge.bench steps`), so a name that is no benchmark fails."""
    mods = set()
    for _, words in COMMANDS:
        if words[0].endswith("python") and len(words) > 2 and words[1] == "-m" and words[2].startswith("frozenbridge"):
            named = words[2] == "frozenbridge.bench" and len(words) > 3 and not words[3].startswith("-") \
                and not placeholder(words[3])
            mods.add(" ".join(words[2:4]) if named else words[2])
    return mods


@pytest.mark.parametrize("module", sorted(python_modules()))
def test_python_modules_exist_and_answer_help(module):
    proc = subprocess.run([sys.executable, "-m", *module.split(), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "usage" in proc.stdout.lower(), proc.stderr[-800:]


def test_stage_scripts_and_cli_commands_exist():
    for page, words in COMMANDS:
        if words[0].endswith("python") and len(words) > 1 and words[1].startswith("stages/"):
            assert (ROOT / words[1]).is_file(), f"{page}: {' '.join(words)}"
        if words[0] == "frozenbridge":
            assert len(words) > 1 and words[1] in (*CLI_COMMANDS, "--help", "-h"), f"{page}: {' '.join(words)}"


def test_a_wrong_command_would_fail():
    """The checks bite: an unknown key, a bad value, a missing stage are each refused."""
    with pytest.raises(AssertionError, match="unknown key train.lr"):
        apply_set_params(["dvc", "exp", "run", "-S", "train.lr=0.01"])  # the key lives under shapes: now
    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.shapes.params import Params

    with pytest.raises(FrozenbridgeError, match="shapes.train.lr = 5"):
        Params.parse(apply_set_params(["dvc", "exp", "run", "-S", "shapes.train.lr=5"]))
    assert not known_stage("train@qa-0") and known_stage("shapes_train@qa-0") and known_stage("shapes_capacity")
    assert page_commands("```bash\ndvc repro shapes_figures  # draw\n```\nthen `dvc exp show` and `ls x`") == [
        "dvc repro shapes_figures", "dvc exp show"]
