"""Every sentence the report writes keeps to 45 words: each generated page's text is made again from the committed
metrics/, results/ and bench/ (as `python -m frozenbridge.tools.report` makes it) and split as
tests/test_docs_prose.py splits a page (tables, code, headings and link targets left out; a list item is a sentence
of its own), so a generating function that strings its clauses past 45 words fails here, naming its page."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_docs_prose import LONGEST, sentences

from frozenbridge.tools.report import (END, FINDINGS_END, FINDINGS_START, START, audit_page, render_results,
                                       update_connectors_page, update_readme)

ROOT = Path(__file__).resolve().parents[1]


def _block(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


GENERATED = {
    "docs/results.md": lambda: render_results(ROOT),
    "README.md, the headline block": lambda: _block(update_readme(ROOT / "README.md", ROOT), START, END),
    "docs/connectors.md, the findings block": lambda: _block(
        update_connectors_page(ROOT / "docs/connectors.md", ROOT), FINDINGS_START, FINDINGS_END),
    # docs/audit.md: the audit page (src/frozenbridge/audit/report/, its own engineer's), made as the report makes it
    "docs/audit.md": lambda: audit_page(ROOT),
}


def too_long(text: str) -> list[str]:
    return [f"{len(s.split())} words: {s[:100]}..." for s in sentences(text) if len(s.split()) > LONGEST]


@pytest.mark.parametrize("page", GENERATED)
def test_generated_sentences_keep_to_45_words(page):
    assert too_long(GENERATED[page]()) == []


def test_a_long_generated_sentence_fails_and_a_long_table_row_does_not():
    words = " ".join(["word"] * LONGEST)
    assert too_long(f"One {words}.") and not too_long(f"{words}.")  # 46 words fail, 45 pass
    assert not too_long(f"| a | One {words} |\n|---|---|")  # a table row is not prose
    assert not too_long(f"Short one. Another {' '.join(['word'] * (LONGEST - 2))}.")  # split where a reader would
    assert not too_long(f"Lead:\n\n- One {' '.join(['word'] * 30)}.\n- Two {' '.join(['word'] * 30)}.")  # items
