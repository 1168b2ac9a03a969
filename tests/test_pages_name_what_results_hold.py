"""A page names the views, settings and machines the results hold, no other and none fewer: docs/connectors.md's and
the results page's connector views and their settings (the folders under results/connectors/), the views the
verdicts read, and the machines of the README's and the results page's metrics and benchmark tables (the `machine`
records of bench/*.json). Each check reads the page's statement and the files apart, and a hand-edited copy of the
page (a wrong name, a name left out) fails it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frozenbridge.comparison.settings import OWN_BEST as DECLARED
from frozenbridge.shapes.report import tables as shapes_tables
from frozenbridge.tools.report import END, FINDINGS_END, FINDINGS_START, FOUND_END, FOUND_START, START
from frozenbridge.tools.verdicts.claims import verdict_rows

ROOT = Path(__file__).resolve().parents[1]
CONNECTORS = ROOT / "results" / "connectors"
TITLES = {"Equal settings": "equal-settings", "Own best": "own-best", "Equal steps": "equal-steps"}  # a view's title on the pages, its name here
SETTING = re.compile(r"\b(?:mlp|resampler|cross_attention|codebook)-\d+\b")
MACHINE = re.compile(r"AMD EPYC|Intel\(R\) Xeon\(R\) Processor|Intel Xeon|NVIDIA [A-Z]\d+|AMD Ryzen|Apple M\d")


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


# ---- the connector views and their settings ----

def held_on_disk(root: Path = ROOT) -> dict[str, set[str]]:
    """{view: its compared settings}: a setting is a folder with a design.json; the MLPs are what they are paired
    with, not settings compared; a view with none is not held."""
    def settings(folder: Path) -> set[str]:
        return {d.name for d in folder.glob("*/") if (d / "design.json").is_file() and not d.name.startswith("mlp")}
    views = {"equal-settings": settings(root / "results/connectors/equal-settings"),
             "own-best": settings(root / "results/connectors"),
             "equal-steps": settings(root / "results/connectors/equal-steps")}
    return {view: names for view, names in views.items() if names}


def views_named_on_connectors_page(text: str) -> dict[str, set[str]]:
    """The views and settings docs/connectors.md's generated block says the results hold (its list, one a view)."""
    block = _between(text, FINDINGS_START, FINDINGS_END)
    items = re.findall(r"^- (Equal settings|Own best|Equal steps) \(`[^`]+`\): (.+)\.$", block, flags=re.M)
    return {TITLES[title]: set(names.split(", ")) for title, names in items}


def views_named_on_results_page(text: str) -> dict[str, set[str]]:
    """The views the results page's connector section heads, and the settings its tables' rows name (the MLPs
    left out)."""
    section = _between(text, "## Connector designs", "\n## ")
    out = {}
    for part in section.split("\n### ")[1:]:
        title = part.split(":", 1)[0]
        rows = re.findall(r"^\| ([^ |]+) \| \d+ \|", part, flags=re.M)
        out[TITLES[title]] = {name for name in rows if not name.startswith("mlp")}
    return out


def test_connectors_page_names_the_views_and_settings_the_results_hold():
    text = (ROOT / "docs/connectors.md").read_text()
    held = held_on_disk()
    assert views_named_on_connectors_page(text) == held
    assert views_named_on_results_page((ROOT / "docs/results.md").read_text()) == held
    named = set(SETTING.findall(text))  # anywhere on the page, hand-written text too: held, or a declared setting
    assert named - set().union(*held.values()) - set(DECLARED) == set()


def test_a_hand_edited_view_or_setting_fails_the_check():
    text = (ROOT / "docs/connectors.md").read_text()
    held = held_on_disk()
    some = sorted(held["own-best"])[0]
    wrong = text.replace(f"): {some}, ", "): resampler-64, ", 1)  # a setting the results do not hold
    assert wrong != text and views_named_on_connectors_page(wrong) != held
    missing = text.replace(f"): {some}, ", "): ", 1)  # one they hold, left out
    assert missing != text and views_named_on_connectors_page(missing) != held
    no_view = re.sub(r"^- Equal settings .*$\n", "", text, count=1, flags=re.M)  # a view they hold, left out
    assert views_named_on_connectors_page(no_view) != held
    page = (ROOT / "docs/results.md").read_text()
    assert views_named_on_results_page(page.replace(f"| {some} | ", "| resampler-64 | ", 1)) != held
    assert set(SETTING.findall("hand-written: resampler-64 ran too")) - set(DECLARED) == {"resampler-64"}


def views_the_verdicts_read(root: Path = ROOT) -> set[str]:
    """The connector views the verdict rows name: in the files they read, or in the command that would fill them."""
    found = set()
    for row in verdict_rows(root):
        said = f"{row['source']} {row['why']}"
        if "results/connectors/equal-settings" in said or "--view equal-settings" in said:
            found.add("equal-settings")
        if "results/connectors/equal-steps" in said or "--view equal-steps" in said:
            found.add("equal-steps")
        if re.search(r"results/connectors/(?!equal-settings|equal-steps)\w", said):
            found.add("own-best")
    return found


def test_connectors_page_says_which_views_the_verdicts_read():
    block = _between((ROOT / "docs/connectors.md").read_text(), FINDINGS_START, FINDINGS_END)
    sentence = next(line for line in block.splitlines() if line.startswith("The verdicts on section 9's claims"))
    named = {view for view in TITLES.values() if f"the {view} view" in sentence}
    assert named == views_the_verdicts_read()
    assert "own-best" in named  # the page once said the verdicts read the equal-settings view only


# ---- the machines ----

def machine_of(path: Path) -> str | None:
    """A bench file's machine as its record names it: CPU model and bf16 path, else its device line."""
    m = json.loads(path.read_text()).get("machine")
    if not m:
        return None
    if m.get("cpu_model"):
        return f"{m['cpu_model']} ({m['bf16_path']})"
    return f"{m['device']} (its record names no CPU model)" if m["device"].upper().startswith("CPU") else m["device"]


def expected_machines(names: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in names:
        if machine := machine_of(ROOT / "bench" / name):
            out.setdefault(machine, set()).add(name)
    return out


def machines_listed(text: str, lead: str) -> dict[str, set[str]]:
    """The list under the sentence `lead` opens: {machine: its files}."""
    listing = text.split(lead, 1)[1].split("\n\n", 2)[1]
    items = re.findall(r"^- (.+?): ((?:`[^`]+`(?:, )?)+)\.$", listing, flags=re.M)
    return {machine: set(re.findall(r"`([^`]+)`", files)) for machine, files in items}


README_LEAD = "The benchmark tables above come from these machines"
RESULTS_LEAD = "The benchmarks below come from these machines"


def results_benches() -> list[str]:
    """The bench files the results page's Benchmarks section shows: every one but the timed run's, the record of who
    made the metrics and the shapes study's own (shown in its sections)."""
    return [p.name for p in sorted((ROOT / "bench").glob("*.json"))
            if p.name not in ("repro.json", "metrics-machine.json") and p.name not in shapes_tables.BENCH_FILES]


def readme_machines(text: str) -> set[str]:
    """The machines README's generated blocks name (the first screen's paragraph and the headline block)."""
    blocks = _between(text, START, END) + _between(text, FOUND_START, FOUND_END)
    return {_plain(name) for name in MACHINE.findall(blocks)}


def test_the_readme_names_the_machine_its_metrics_and_time_come_from_and_no_other():
    """The README's benchmark tables moved to the results page: its generated blocks name the machine that made the
    metrics (bench/metrics-machine.json, else the timed run's) and the timed run's (bench/repro.json), no other."""
    text = (ROOT / "README.md").read_text()
    repro = machine_of(ROOT / "bench/repro.json")
    made = machine_of(ROOT / "bench/metrics-machine.json") if (ROOT / "bench/metrics-machine.json").is_file() else repro
    assert f"made them on the {made}" in _between(text, START, END) and repro in _between(text, FOUND_START, FOUND_END)
    assert (f"The time above is the {repro}'s" in _between(text, START, END)) == (made != repro)
    assert README_LEAD not in text
    assert readme_machines(text) == {_plain(m) for m in MACHINE.findall(repro) + MACHINE.findall(made)}


def test_the_results_page_names_the_machines_of_its_benchmarks():
    page = (ROOT / "docs/results.md").read_text()
    assert machines_listed(page, RESULTS_LEAD) == expected_machines(results_benches())


def _plain(name: str) -> str:
    """"Intel(R) Xeon(R) Processor" as a note writes it: "Intel Xeon"."""
    return re.sub(r"\(R\)|\s+Processor", "", name)


def test_no_page_names_a_machine_no_record_holds():
    records = {_plain(m) for p in (ROOT / "bench").glob("*.json") if (m := machine_of(p))}
    for page in (ROOT / "README.md", ROOT / "docs/results.md"):
        named = {_plain(name) for name in MACHINE.findall(page.read_text())}
        assert {name for name in named if not any(name in record for record in records)} == set(), page.name


def test_a_hand_edited_machine_fails_the_check():
    text = (ROOT / "README.md").read_text()
    repro = MACHINE.findall(machine_of(ROOT / "bench/repro.json"))[0]
    edited = text.replace(repro, "AMD Ryzen", 1)  # the first screen's machine, typed over by hand
    assert edited != text and _plain("AMD Ryzen") in readme_machines(edited) - readme_machines(text)
    records = {m for p in (ROOT / "bench").glob("*.json") if (m := machine_of(p))}
    assert not any("AMD Ryzen" in record for record in records) and MACHINE.findall("made on an AMD Ryzen")

def test_the_metrics_are_said_to_be_the_machine_s_that_made_them_and_the_time_another_s():
    from frozenbridge.tools.machines import metrics_machine_sentence

    intel = {"cpu_model": "Intel Xeon", "bf16_path": "AMX", "date": "2026-12-06"}
    amd = {"cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16", "date": "2026-12-07"}
    assert metrics_machine_sentence({"machine": intel}, {"machine": amd, "commit": "ec157ff"}) == (
        "The metrics above are one machine's draws: `dvc repro` of commit ec157ff made them on the AMD EPYC "
        "(AVX512-BF16), 2026-12-07. The time above is the Intel Xeon (AMX)'s, a run of its own.")
    assert "time above" not in metrics_machine_sentence({"machine": amd}, {"machine": amd, "commit": "ec157ff"})
    assert metrics_machine_sentence({"machine": intel}, None).endswith("made them on the Intel Xeon (AMX), 2026-12-06.")


def test_recording_who_made_the_metrics_is_refused_while_a_stage_is_out_of_date(tmp_path, monkeypatch):
    import subprocess

    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.tools import repro_timing

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=tmp_path, check=True)
    monkeypatch.setattr(repro_timing, "changed_stages", lambda root: ["shapes_data", "shapes_encode"])
    with pytest.raises(FrozenbridgeError, match="2 stages are not up to date"):
        repro_timing.record_made_here(tmp_path, None)
    assert not (tmp_path / "bench/metrics-machine.json").exists()
    monkeypatch.setattr(repro_timing, "changed_stages", lambda root: [])
    made = repro_timing.record_made_here(tmp_path, None)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tmp_path, capture_output=True, text=True)
    assert json.loads((tmp_path / "bench/metrics-machine.json").read_text()) == made
    assert made["commit"] == head.stdout.strip() and made["machine"]["cpu_model"]
