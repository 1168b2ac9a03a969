"""The commands a user types, the tools, the benchmarks, the sweeps, the tiny-model writers and each subcommand of
`frozenbridge`: every flag has help, and the usage line shows the command as it is typed."""

import argparse
import runpy
import sys
from pathlib import Path

import pytest

from frozenbridge.bench.__main__ import benchmarks

ROOT = Path(__file__).resolve().parents[1]

MODULES = ["frozenbridge.tools.forecast", "frozenbridge.tools.report", "frozenbridge.tools.repro_timing",
           "frozenbridge.tools.snapshot", "frozenbridge.tools.run_floor", "frozenbridge.tools.rerun_check",
           "frozenbridge.shapes.sweeps.converge",
           "frozenbridge.shapes.sweeps.probe_places", "frozenbridge.digits.sweeps.limits",
           "frozenbridge.digits.sweeps.reachable", "frozenbridge.testing.tiny_models",
           "frozenbridge.testing.tiny_gguf", "frozenbridge.tools.plots_template"]


class _Parsed(Exception):
    """Raised in place of parsing, carrying the parser a command built."""


def _parser(monkeypatch, run) -> argparse.ArgumentParser:
    def grab(self, *args, **kwargs):
        raise _Parsed(self)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", grab)
    with pytest.raises(_Parsed) as parsed:
        run()
    return parsed.value.args[0]


def _without_help(parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            out += [f"{name} {flag}" for name, sub in action.choices.items() for flag in _without_help(sub)]
        elif not action.help and not isinstance(action, argparse._HelpAction):
            out.append("/".join(action.option_strings) or action.dest)
    return out


@pytest.mark.parametrize("module", MODULES)
def test_every_flag_of_a_tool_has_help(module, monkeypatch):
    monkeypatch.setattr(sys, "argv", [module])
    sys.modules.pop(module, None)
    parser = _parser(monkeypatch, lambda: runpy.run_module(module, run_name="__main__"))
    assert _without_help(parser) == []
    assert parser.format_usage().startswith(f"usage: python -m {module} ")


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_every_flag_of_a_benchmark_has_help(name, monkeypatch):
    """Each benchmark, run through the one entry point: `python -m frozenbridge.bench NAME`."""
    from frozenbridge.bench.__main__ import main

    parser = _parser(monkeypatch, lambda: main([name]))
    assert _without_help(parser) == []
    assert parser.format_usage().startswith(f"usage: python -m frozenbridge.bench {name} ")


def test_every_flag_of_the_command_line_has_help(monkeypatch):
    from frozenbridge import cli

    parser = _parser(monkeypatch, lambda: cli.main(["draw", "x.png"]))
    assert _without_help(parser) == []
    assert parser.format_usage().startswith("usage: frozenbridge ")


def test_a_flag_without_help_is_found(monkeypatch):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quiet", action="store_true", help="say less")
    sub = ap.add_subparsers().add_parser("go")
    sub.add_argument("--far")
    assert _without_help(ap) == ["go --far"]


STAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "stages").glob("*/*.py"))


@pytest.mark.parametrize("script", STAGES)
def test_every_stage_script_names_itself_as_dvc_runs_it(script, monkeypatch):
    """`python stages/shapes/train.py --help` says `usage: python stages/shapes/train.py`, not `train.py`; every flag
    has help."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [script])
    parser = _parser(monkeypatch, lambda: runpy.run_path(script, run_name="__main__"))
    assert parser.format_usage().startswith(f"usage: python {script} ")
    assert _without_help(parser) == []
