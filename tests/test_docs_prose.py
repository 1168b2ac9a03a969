"""The hand-written pages stay complete and readable: the README names every tool, draws every stage and lists every
page, and no sentence of README.md or docs/*.md (the generated results page aside) runs past 45 words, with a median
under 22."""

import re
import statistics
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "results.md")]
LONGEST, MEDIAN_BELOW = 45, 22


def _section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def test_the_architecture_page_lists_every_tool():
    tools = ROOT / "src" / "frozenbridge" / "tools"
    names = {p.stem for p in tools.glob("*.py") if p.stem != "__init__"}
    names |= {f"{p.name}/" for p in tools.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    layout = _section((ROOT / "docs" / "architecture.md").read_text(), "## The folders", "## ")
    line = _section(layout, "tools/", "testing/")
    assert {n for n in names if not re.search(rf"(?<![\w/]){re.escape(n)}(?![\w])", line)} == set()


def test_readme_pipeline_picture_draws_every_stage():
    stages = set(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"])
    section = _section((ROOT / "README.md").read_text(), "## The pipeline", "## ")
    assert {s for s in stages if not re.search(rf"\b{s}\b", section)} == set()


def test_readme_pages_list_every_page():
    pages = _section((ROOT / "README.md").read_text() + "\n## ", "## Pages", "## ")
    assert {p.name for p in (ROOT / "docs").glob("*.md") if f"](docs/{p.name})" not in pages} == set()


def sentences(text: str) -> list[str]:
    """The prose sentences of a markdown page: code blocks, tables, headings, the generated headline block and link
    targets left out; a paragraph or list item ends a sentence; a code span counts as one word; otherwise a sentence
    ends at . ! or ? before a capital, a digit, a code span or the end."""
    text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
    text = re.sub(r"<!-- headline:start.*?headline:end -->", "\n\n", text, flags=re.S)
    text = re.sub(r"\n(?=\s*(?:[-*] |\d+\. ))", "\n\n", text)  # each list item a paragraph of its own
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [re.sub(r"^\s*(?:[-*]|\d+\.) ", "", ln) for ln in block.splitlines()
                 if ln.strip() and not ln.lstrip().startswith(("|", "#", "<!--"))]
        prose = re.sub(r"`[^`]*`", "X", re.sub(r"\]\([^)]*\)", "]", " ".join(lines)))
        prose = re.sub(r"\b(e\.g|i\.e|vs|etc)\.", r"\1", prose)
        out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*\"(\[X0-9])", prose) if s.split()]
    return out


def test_sentence_counter_splits_where_a_reader_would():
    text = "# Title\n\nOne short one. Then `a --long code span` counts once, e.g. here.\n\n```\nNot. Prose.\n```\n" \
           "| a | table. Row |\n\nA [link](x.md#a.b) ends it:\n\n- a list item\n- and another one\n"
    assert [len(s.split()) for s in sentences(text)] == [3, 6, 4, 3, 3]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_read_in_short_sentences(page):
    words = {s: len(s.split()) for s in sentences(page.read_text())}
    too_long = [f"{n} words: {s[:80]}..." for s, n in words.items() if n > LONGEST]
    assert too_long == []
    assert statistics.median(words.values()) < MEDIAN_BELOW
