"""`dvc plots show` in a real browser: every chart draws its marks, the scores chart shows no value above 100% and
matches plots/shapes/scores.csv, the digits chart draws one line a run of plots/digits/accuracy.csv through that run's
points in epoch order, and every figure loads and fits the page.

The page that `dvc plots show` writes for this repository (its committed plots/ and metrics/) is opened in Debian's
headless Chromium with no network; a small probe script appended to a copy of the page reports, once the charts have
rendered, what each chart drew (Vega's SVG marks carry their values in aria-labels) and where each image sits.
Two negative controls render the old charts and must be caught: DVC's stock bar template, which stacks the four
pictures of a label into one bar, and its stock `linear` template, which ignores the run column and joins every run
into one zigzag line. `.ci/run` installs the browser (`apt-get install chromium-headless-shell`); elsewhere
the tests are skipped when no browser is found, unless FROZENBRIDGE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser")
WIDTH = 1280
PROBE = """
<script>
window.addEventListener('load', () => setTimeout(() => {
  const report = {viewport: document.documentElement.clientWidth, images: [], charts: [],
                  embeds: document.querySelectorAll('script').length};
  for (const img of document.images) {
    const r = img.getBoundingClientRect();
    report.images.push({src: img.getAttribute('src').slice(0, 60), natural: img.naturalWidth, right: r.right});
  }
  for (const svg of document.querySelectorAll('svg.marks')) {
    const marks = [...svg.querySelectorAll('[role="graphics-symbol"]')]
      .map(m => [m.getAttribute('aria-roledescription'), m.getAttribute('aria-label')]);
    const axes = [...svg.querySelectorAll('[aria-roledescription="axis"]')].map(a => a.getAttribute('aria-label'));
    const titles = [...svg.querySelectorAll('[aria-roledescription="title"]')].map(t => t.getAttribute('aria-label'));
    const lines = [...svg.querySelectorAll('path[aria-roledescription="line mark"]')]
      .map(p => [p.getAttribute('aria-label'), p.getAttribute('d')]);
    report.charts.push({title: titles.join(' | '), marks, axes, lines});
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(report);
  document.body.appendChild(pre);
}, 3000));
</script>
"""
AXIS_RANGE = re.compile(r"values from (-?[\d.]+) to (-?[\d.]+)")
PATH_POINT = re.compile(r"[ML]\s*(-?[\d.]+(?:e-?\d+)?)[ ,](-?[\d.]+(?:e-?\d+)?)")


def browser() -> str | None:
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None and os.environ.get("FROZENBRIDGE_REQUIRE_BROWSER") == "1":
        pytest.fail("no headless Chromium: apt-get install -y chromium-headless-shell (.ci/run does this)")
    return found


def dvc_plots_show(repo: Path, out: Path) -> Path:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1", "DVC_SITE_CACHE_DIR": str(out.parent / "dvc-site-cache")}
    proc = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "-o", str(out)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "failed" not in proc.stderr + proc.stdout, proc.stderr + proc.stdout
    return out / "index.html"


def probe(index: Path, exe: str) -> dict:
    """Open a copy of the page with the probe appended; return what the probe saw."""
    probed = index.with_name("probed.html")
    head, tail = index.read_text(encoding="utf-8").rsplit("</body>", 1)  # the last one: the bundle has its own
    probed.write_text(head + PROBE + "</body>" + tail, encoding="utf-8")
    proc = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         f"--user-data-dir={index.parent / 'chrome-profile'}", f"--window-size={WIDTH},1000",
         "--virtual-time-budget=20000", "--dump-dom", probed.as_uri()],
        capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert found, f"the probe never reported (charts did not finish?):\n{proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def label_values(label: str) -> dict[str, str]:
    return dict(part.split(": ", 1) for part in label.split("; ") if ": " in part)


def over_100(chart: dict) -> list[str]:
    """What a percentage chart drew above 100: bar values, or an axis that reaches past 100."""
    bad = [label for kind, label in chart["marks"] if kind == "bar" and
           any(float(v) > 100 for k, v in label_values(label).items() if k.startswith(("exact match", "median")))]
    for axis in chart["axes"]:
        m = AXIS_RANGE.search(axis or "")
        if m and "exact match" in axis.lower() + chart["title"].lower() and float(m.group(2)) > 100:
            bad.append(axis)
    return bad


def path_points(d: str) -> list[tuple[float, float]]:
    """The vertices of a straight-segment SVG path (Vega writes a linear line as M x,y L x,y ...)."""
    return [(float(x), float(y)) for x, y in PATH_POINT.findall(d or "")]


def read_runs(path: Path) -> dict[str, list[tuple[float, float]]]:
    """run -> its (epoch, accuracy) points in epoch order, from a CSV with run, epoch and accuracy columns."""
    runs: dict[str, list[tuple[float, float]]] = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            runs.setdefault(r["run"], []).append((float(r["epoch"]), float(r["accuracy"])))
    return {run: sorted(points) for run, points in runs.items()}


def lines_untrue_to_runs(chart: dict, runs: dict[str, list[tuple[float, float]]], tol: float = 0.6) -> list[str]:
    """What is wrong with a chart meant to draw one line a run, each through that run's points in epoch order.

    Each drawn line must name its run (in its aria-label) and have one vertex per epoch of that run, left to right;
    one affine map from epoch to x and one from accuracy to y (the chart's scales) must put every vertex of every
    line on its run's value, to within `tol` pixels. Empty when the chart is true to the data.
    """
    bad = []
    drawn: dict[str, list[tuple[float, float]]] = {}
    for label, d in chart["lines"]:
        run = label_values(label or "").get("run")
        if run is None:
            bad.append(f"a line that names no run: {label}")
        elif run in drawn:
            bad.append(f"two lines for run {run}")
        else:
            drawn[run] = path_points(d)
    if len(chart["lines"]) != len(runs):
        bad.append(f"{len(chart['lines'])} line marks for {len(runs)} runs")
    if set(drawn) != set(runs):
        bad.append(f"lines for {sorted(drawn)}, runs in the data {sorted(runs)}")
    pairs = [(data, px) for run in set(drawn) & set(runs) for data, px in zip(runs[run], drawn[run], strict=False)]
    for run in set(drawn) & set(runs):
        if len(drawn[run]) != len(runs[run]):
            bad.append(f"{run}: {len(drawn[run])} points drawn for {len(runs[run])} epochs")
        xs = [x for x, _ in drawn[run]]
        if any(b <= a for a, b in zip(xs, xs[1:], strict=False)):
            bad.append(f"{run}: the line goes back along x (points not in epoch order)")
    for axis in (0, 1) if pairs else ():  # x from epoch, y from accuracy
        lo, hi = min(pairs, key=lambda p: p[0][axis]), max(pairs, key=lambda p: p[0][axis])
        if hi[0][axis] == lo[0][axis]:
            continue
        scale = (hi[1][axis] - lo[1][axis]) / (hi[0][axis] - lo[0][axis])
        off = [(data, px) for data, px in pairs
               if abs(lo[1][axis] + (data[axis] - lo[0][axis]) * scale - px[axis]) > tol]
        if off:
            bad.append(f"{len(off)} vertices off their value along {'xy'[axis]}, e.g. {off[0]}")
    return bad


@pytest.fixture(scope="module")
def exe() -> str:
    """The browser, and the offline page template (./setup.sh builds it; a bare checkout may lack it)."""
    found = browser()
    if found is None:
        pytest.skip("no headless Chromium (apt-get install chromium-headless-shell)")
    if not (ROOT / ".dvc" / "plots" / "offline.html").is_file():
        from frozenbridge.tools.plots_template import build_template
        build_template(ROOT / ".dvc" / "plots" / "offline.html")
    return found


@pytest.fixture(scope="module")
def report(exe, tmp_path_factory) -> dict:
    return probe(dvc_plots_show(ROOT, tmp_path_factory.mktemp("page") / "dvc_plots"), exe)


def test_every_chart_draws_its_marks(report):
    titles = [c["title"] for c in report["charts"]]
    assert not [t for t in titles if ".csv" in t], f"a CSV drawn by DVC's default template: {titles}"
    assert any("Exact match" in t for t in titles) and any("loss" in t.lower() for t in titles), titles
    for chart in report["charts"]:
        assert chart["marks"], f"{chart['title']}: nothing drawn"


def test_scores_chart_is_true_to_the_csv_and_never_above_100(report):
    chart = next(c for c in report["charts"] if "Exact match" in c["title"])
    assert over_100(chart) == []
    drawn = {(v["recipe"], v["test"], v["task"], v["condition"]): float(v["median, %"])
             for kind, label in chart["marks"] if kind == "bar" for v in [label_values(label)]}
    with open(ROOT / "plots" / "shapes" / "scores.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["condition"] != "gap"]
    assert drawn == {(r["recipe"], r["test"], r["task"], r["condition"]): float(r["median"]) for r in rows}
    # the right picture and its three controls side by side: four bars for every recipe, test set and task
    assert {k[3] for k in drawn} == {"right", "blank", "wrong", "none"}


def test_retrieval_chart_shows_every_tower_true_to_the_csv(report):
    chart = next(c for c in report["charts"] if "Retrieval: recall@1" in c["title"])
    drawn = {(v["tower"], v["test"], v["length"], v["direction"]): float(v["R@1 median"])
             for kind, label in chart["marks"] if kind == "bar" for v in [label_values(label)]}
    with open(ROOT / "plots" / "retrieval" / "recall.csv") as f:
        rows = list(csv.DictReader(f))
    assert drawn == {(r["tower"], r["test"], r["length"], r["direction"]): float(r["median"]) for r in rows}
    assert len({k[0] for k in drawn}) >= 3  # adaptor, linear, from scratch side by side


def test_onetoken_chart_shows_every_caption_kind_true_to_the_csv(report):
    chart = next(c for c in report["charts"] if "One token from a pooled vector" in c["title"])
    drawn = {v["captions"]: float(v["agreement"].replace("\u2212", "-"))  # Vega writes a true minus
             for kind, label in chart["marks"] if kind == "bar" for v in [label_values(label)]}
    with open(ROOT / "plots" / "onetoken" / "agreement.csv") as f:
        rows = {r["captions"]: float(r["agreement"]) for r in csv.DictReader(f)}
    assert drawn == rows and "the folder's captions" in drawn  # untrained and trained per replicate, and the ceiling


def test_all_loss_curves_share_one_chart_coloured_by_recipe(report):
    charts = [c for c in report["charts"] if "loss" in c["title"].lower()]
    assert len(charts) == 1
    with open(ROOT / "plots" / "shapes" / "loss.csv") as f:
        runs = {(r["recipe"], r["replicate"]) for r in csv.DictReader(f)}
    lines = [label_values(label) for kind, label in charts[0]["marks"] if kind == "line mark"]
    assert {tuple(v["run"].split("/")) for v in lines} == runs
    assert {v["recipe"] for v in lines} == {r for r, _ in runs}


def test_digits_chart_draws_one_line_a_run_in_epoch_order(report):
    charts = [c for c in report["charts"] if "Digits: test captions" in c["title"]]
    assert len(charts) == 1, [c["title"] for c in report["charts"]]
    runs = read_runs(ROOT / "plots" / "digits" / "accuracy.csv")
    assert len(runs) >= 2 and all(len(points) >= 2 for points in runs.values())
    assert lines_untrue_to_runs(charts[0], runs) == []


def test_figures_load_and_fit_the_page(report):
    assert report["images"], "no PNG figures on the page"
    for img in report["images"]:
        assert img["natural"] > 0, f"{img['src']}: did not load"
        assert img["right"] <= report["viewport"], f"{img['src']}: overflows the page ({img['right']} px)"


def scratch_project(tmp_path: Path, *templates: str) -> Path:
    """An empty git + DVC project with this repository's offline page and the named plot templates."""
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for args in (["init", "-q"], ["config", "core.analytics", "false"],
                 ["config", "plots.html_template", "plots/offline.html"]):
        subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, check=True, capture_output=True, timeout=120)
    (repo / ".dvc" / "plots").mkdir(exist_ok=True)
    for name in templates:
        shutil.copy(ROOT / ".dvc" / "plots" / name, repo / ".dvc" / "plots" / name)
    return repo


def test_the_check_catches_stacked_bars(exe, tmp_path):
    """Negative control: DVC's stock bar template stacks the conditions of one label into a bar beyond 100%."""
    repo = scratch_project(tmp_path, "offline.html")
    (repo / "scores.csv").write_text("label,condition,median\nqa seen count,right,90\nqa seen count,blank,60\n"
                                     "qa seen count,wrong,30\nqa seen count,none,0\n")
    (repo / "dvc.yaml").write_text("plots:\n  - scores:\n      template: bar_horizontal\n      x: median\n"
                                   "      y:\n        scores.csv: label\n      title: Exact match (stacked)\n")
    chart = probe(dvc_plots_show(repo, tmp_path / "out"), exe)["charts"][0]
    assert chart["marks"] and over_100({**chart, "marks": []}), chart["axes"]


def test_the_check_catches_runs_joined_into_one_line(exe, tmp_path):
    """Negative control: DVC's stock `linear` template ignores the run column and zigzags through every run's points;
    the same CSV (runs interleaved, epochs out of order) through our template draws one line a run and passes."""
    repo = scratch_project(tmp_path, "offline.html", "accuracy.json")
    (repo / "accuracy.csv").write_text('run,epoch,accuracy\n"1 tok, rep 0",2,0.5\n"8 tok, rep 0",0,0.1\n'
                                       '"1 tok, rep 0",0,0.1\n"8 tok, rep 0",1,0.7\n"1 tok, rep 0",1,0.3\n'
                                       '"8 tok, rep 0",2,0.9\n')
    (repo / "dvc.yaml").write_text("plots:\n"
                                   "  - stock:\n      template: linear\n      x: epoch\n"
                                   "      y:\n        accuracy.csv: accuracy\n      title: Stock linear\n"
                                   "  - ours:\n      template: accuracy\n      x: epoch\n"
                                   "      y:\n        accuracy.csv: accuracy\n      title: One line a run\n")
    charts = {c["title"]: c for c in probe(dvc_plots_show(repo, tmp_path / "out"), exe)["charts"]}
    runs = read_runs(repo / "accuracy.csv")
    stock = next(c for t, c in charts.items() if "Stock linear" in t)
    ours = next(c for t, c in charts.items() if "One line a run" in t)
    assert stock["lines"] and lines_untrue_to_runs(stock, runs)
    assert lines_untrue_to_runs(ours, runs) == []
