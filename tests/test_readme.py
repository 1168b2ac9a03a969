"""The README stays true: its results block is what `python -m frozenbridge.report` makes from metrics/."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.report import END, START, render, update

ROOT = Path(__file__).resolve().parents[1]


def test_readme_results_match_committed_metrics():
    readme = ROOT / "README.md"
    assert update(readme, ROOT / "metrics") == readme.read_text(), "run: python -m frozenbridge.report"


def test_report_renders_the_training_table_from_metrics(tmp_path):
    (tmp_path / "data.json").write_text(
        '{"train": {"pictures": 5, "questions_count": 5, "questions_binding": 7, "questions_leftmost": 5},'
        ' "test_seen": {"pictures": 1, "questions_count": 1, "questions_binding": 1, "questions_leftmost": 1},'
        ' "test_heldout": {"pictures": 2, "questions_count": 2, "questions_binding": 1, "questions_leftmost": 2},'
        ' "train_color_kind": {"red": {"circle": 3, "triangle": 0}}}')
    text = render(tmp_path)
    assert text.startswith(START) and text.endswith(END)
    assert "| train | 5 | 5 | 7 | 5 |" in text and "| red | 3 | 0 |" in text
