"""`dvc plots show` renders offline: the page it writes with our template inlines all of its JavaScript.

A throwaway DVC project gets a CSV plot and `plots.html_template = plots/offline.html` (relative to `.dvc/`, as
DVC resolves it); `dvc plots show` must then write a page with no external script, the inlined vega-embed code,
and the CSV's values. The chart spec in that page is also rendered to SVG by vl-convert (the same Vega and
Vega-Lite the bundle carries), and where node is installed the page's scripts are run in order, as a browser would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frozenbridge.tools.plots_template import _vegalite_version, build_template, main

CSV = "step,loss\n0,0.9137\n1,0.6021\n2,0.4375\n3,0.3318\n"
EXTERNAL_SCRIPT = re.compile(r"<script\b[^>]*\bsrc\s*=", re.IGNORECASE)
SPEC = re.compile(r"var spec = (\{.*?\});\s*vegaEmbed\('#", re.DOTALL)


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1", "DVC_SITE_CACHE_DIR": str(cwd.parent / "dvc-site-cache")}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def dvc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "dvc", *args], cwd)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return build_template(tmp_path_factory.mktemp("template") / "offline.html")


@pytest.fixture(scope="module")
def page(tmp_path_factory, template) -> str:
    """The index.html that `dvc plots show` writes in a fresh project configured with the offline template."""
    repo = tmp_path_factory.mktemp("project")
    run(["git", "init", "-q"], repo)
    dvc("init", "-q", cwd=repo)
    dvc("config", "core.analytics", "false", cwd=repo)
    dvc("config", "plots.html_template", "plots/offline.html", cwd=repo)
    (repo / ".dvc" / "plots").mkdir()
    shutil.copy(template, repo / ".dvc" / "plots" / "offline.html")
    (repo / "loss.csv").write_text(CSV)
    (repo / "dvc.yaml").write_text("plots:\n  - loss.csv:\n      x: step\n      y: loss\n")
    out = dvc("plots", "show", cwd=repo).stdout
    index = repo / "dvc_plots" / "index.html"
    assert index.is_file(), out
    assert index.as_uri() in out
    return index.read_text(encoding="utf-8")


def test_template_keeps_dvc_placeholders_and_no_cdn(template):
    text = template.read_text(encoding="utf-8")
    assert "{plot_divs}" in text and "{refresh_tag}" in text
    assert "{scripts}" not in text  # dvc-render fills it with the CDN <script src=...> tags
    assert not EXTERNAL_SCRIPT.search(text)
    assert text.lower().count("</script") == 1  # the bundle cannot end its own <script> element early
    assert "window.vegaEmbed=" in text  # our snippet, after the bundler renamed its local
    assert len(text) > 500_000  # vega + vega-lite + vega-embed really are inlined


def test_dvc_plots_show_page_is_self_contained(page):
    assert not EXTERNAL_SCRIPT.search(page), "the page loads a script from elsewhere"
    assert "cdn.jsdelivr.net" not in page
    assert "window.vegaEmbed=" in page
    assert "vegaEmbed('#" in page  # the chart div written into {plot_divs}
    assert "0.6021" in page and "0.3318" in page  # the CSV's data is embedded in the spec


def test_chart_spec_renders(page):
    import vl_convert

    spec = json.loads(SPEC.search(page).group(1))
    values = [row["loss"] for row in spec["data"]["values"]]
    assert [float(v) for v in values] == [0.9137, 0.6021, 0.4375, 0.3318]
    svg = vl_convert.vegalite_to_svg(spec, vl_version=_vegalite_version())
    assert svg.startswith("<svg") and "<path" in svg and "loss" in svg


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_scripts_run_in_order(page, tmp_path):
    """Each inline <script>, in page order, in one global scope: the bundle defines vegaEmbed, each chart calls it."""
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.DOTALL)
    assert len(scripts) >= 2
    (tmp_path / "scripts.json").write_text(json.dumps(scripts))
    runner = tmp_path / "run.js"
    runner.write_text(
        """
const fs = require('fs'), vm = require('vm');
const scripts = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const calls = [];
const ctx = {console, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, structuredClone,
             URL, TextEncoder, TextDecoder};
ctx.window = ctx; ctx.self = ctx;
vm.createContext(ctx);
vm.runInContext(scripts[0], ctx);
if (typeof ctx.vegaEmbed !== 'function') throw new Error('the bundle did not define vegaEmbed');
ctx.vegaEmbed = (el, spec) => { calls.push([el, spec.data.values.length]); };  // no DOM here: record the call
for (const s of scripts.slice(1)) vm.runInContext(s, ctx);
console.log(JSON.stringify(calls));
"""
    )
    proc = subprocess.run(["node", str(runner), str(tmp_path / "scripts.json")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(calls) == 1 and calls[0][0].startswith("#") and calls[0][1] == 4


def test_cli_writes_default_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    assert (tmp_path / ".dvc" / "plots" / "offline.html").is_file()
    assert not list((tmp_path / ".dvc" / "plots").glob(".*tmp*"))  # the temp file was renamed, not left behind
    assert "offline.html" in capsys.readouterr().out
