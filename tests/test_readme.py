"""The README and docs/results.md stay true: the README's headline table and the whole results page are what
`python -m frozenbridge.tools.report` makes from metrics/, results/ and bench/."""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.tools.report import END, START, headline_table, render_results, update_readme

ROOT = Path(__file__).resolve().parents[1]


def test_readme_headline_matches_committed_metrics():
    readme = ROOT / "README.md"
    assert update_readme(readme, ROOT) == readme.read_text(), "run: python -m frozenbridge.tools.report"
    assert START in readme.read_text() and END in readme.read_text()


def test_results_page_matches_committed_metrics():
    page = ROOT / "docs" / "results.md"
    assert render_results(ROOT) == page.read_text(), "run: python -m frozenbridge.tools.report"


def test_results_page_links_figures_that_exist():
    import re

    text = (ROOT / "docs" / "results.md").read_text()
    links = re.findall(r"\]\((\.\./plots/[^)]+)\)", text)
    assert links and all((ROOT / "docs" / link).resolve().is_file() for link in links), links


def test_report_renders_the_training_table_from_metrics(tmp_path):
    (tmp_path / "metrics" / "shapes").mkdir(parents=True)
    (tmp_path / "metrics" / "shapes" / "data.json").write_text(
        '{"train": {"pictures": 5, "questions_count": 5, "questions_binding": 7, "questions_leftmost": 5},'
        ' "test_seen": {"pictures": 1, "questions_count": 1, "questions_binding": 1, "questions_leftmost": 1},'
        ' "test_heldout": {"pictures": 2, "questions_count": 2, "questions_binding": 1, "questions_leftmost": 2},'
        ' "train_color_kind": {"red": {"circle": 3, "triangle": 0}}}')
    text = render_results(tmp_path)
    assert text.startswith("# Results") and "## The shapes study" in text
    assert "| train | 5 | 5 | 7 | 5 |" in text and "| red | 3 | 0 |" in text
    assert headline_table(tmp_path) == ["No metrics yet: run `dvc repro`."]  # no scores yet: no headline rows


def test_headline_rows_follow_the_metrics(tmp_path):
    """A recipe that did not run has no row; the digits rows are named by the token counts the metrics hold."""
    from frozenbridge.tools.headline import headline

    shapes, digits = tmp_path / "metrics" / "shapes", tmp_path / "metrics" / "digits"
    shapes.mkdir(parents=True)
    digits.mkdir(parents=True)
    cell = {"right": {"median": 70.0, "min": 60.0, "max": 80.0}, "gap": {"median": 50.0, "min": 40.0, "max": 60.0}}
    (shapes / "scores.json").write_text(json.dumps({"caption": {"seen": {"caption": cell}, "heldout": {}}}))
    acc = {"median": 0.5, "min": 0.4, "max": 0.6}
    (digits / "adapter.json").write_text(json.dumps({"by_tokens": {"4": {"accuracy": acc, "replicates": {"0": 0.5}}}}))
    (tmp_path / "params.yaml").write_text("replicates: [0, 1, 2]\n")
    assert headline(tmp_path / "metrics") == {"headline": {"shapes": {"caption_exact_seen": 70.0},
                                                           "digits": {"adapter_4_tokens_accuracy": 0.5}}}
    table = headline_table(tmp_path)
    assert table[0].startswith("Medians over 3 replicates")
    assert "| shapes | captions exactly right, seen pairs (caption) | 70% [60–80] | 75.8% (91 of 120) |" in table
    assert "| digits | test captions naming the right digit, adapter of 4 prefix tokens | 0.500 [0.400–0.600] | — |" \
        in table  # the reference ran 8 tokens: no number to set beside 4


def test_reading_counts_replicates_ahead_and_behind():
    from frozenbridge.shapes.report.reading import paired_sentence, stage1_sentence

    reps = {"qa": {"heldout": {"binding": {"0": {"right": 40.0}, "1": {"right": 50.0}, "2": {"right": 30.0}}}},
            "caption_qa": {"heldout": {"binding": {"0": {"right": 70.0}, "1": {"right": 50.0}, "2": {"right": 20.0}}}}}
    text = paired_sentence(reps)
    assert "caption_qa ahead in 1, behind in 1, tied in 1 of 3 replicates" in text
    assert "replicate 0: 40 vs 70" in text
    assert paired_sentence({"qa": {}}) is None
    cell = {"right": {"median": 75.0, "min": 70.0, "max": 80.0}}
    scores = {"caption": {t: {"caption": cell} for t in ("seen", "heldout")}}
    zero = {"median": 0.0, "min": 0.0, "max": 0.0}
    controls = {"caption": {t: {"caption": {"blank": zero, "wrong": {**zero, "max": 3.33}, "none": zero}}
                            for t in ("seen", "heldout")}}
    assert "no replicate gets more than 3.33% right" in stage1_sentence(scores, controls)


def test_convergence_table_marks_the_default_and_names_what_beat_it():
    from frozenbridge.shapes.report.tables import converge_table

    def entry(lr, worst70, step_seconds):
        return {"overrides": {"train.lr": lr}, "steps": 400, "step_seconds": step_seconds,
                "summary": {"seeds": 3, "median_50": 100, "worst_50": 150, "median_70": worst70,
                            "worst_70": worst70, "best_exact": [70, 71, 72]}}
    saved = {"items": 60, "every": 25, "results": {
        "lr 1e-3": entry(0.001, 200, 1.0), "lr 2e-3": entry(0.002, 300, 0.5), "lr 3e-3": entry(0.003, None, 1.0),
        "untimed": {"overrides": {"train.lr": 0.004}, "steps": 400, "summary": {}}}}
    rows = converge_table(saved, {"shapes": {"train": {"lr": 0.001}}})
    assert any(r.startswith("| lr 1e-3 ◀ | 3 | 1.00 | 100 / 150 (100 / 150) | 200 / 200 (200 / 200) |") for r in rows)
    assert any(r.startswith("| lr 2e-3 | 3 | 0.50 | 100 / 150 (50 / 75) | 300 / 300 (150 / 150) |") for r in rows)
    assert any(r.startswith("| lr 3e-3 | 3 | 1.00 | 100 / 150 (100 / 150) | never / never (— / —) |") for r in rows)
    assert not any("untimed" in r for r in rows)
    assert rows[-1] == ("On the worst seed's seconds to 70%, against the marked setting (200 s): faster by more than "
                        "5%: lr 2e-3 (150 s); within 5%: none; slower or never there: lr 3e-3.")


def test_time_paragraph_names_the_machine_and_both_step_readings():
    from frozenbridge.tools.report import repro_time

    saved = {"machine": {"cpu": "2 cores, x86_64", "device": "cpu", "torch": "2.13.0+cpu", "date": "2026-11-30"},
             "benchmark_step_seconds": 1.2, "total_seconds": 1500.0, "training_steps_seconds": 1200.0,
             "categories": {"data": 60.0, "training": 1300.0, "evaluation": 120.0, "summaries and figures": 20.0},
             "stage_count": 14}
    text = repro_time(saved)[0]
    assert "**25 min 00 s** on a 2 cores, x86_64 CPU machine" in text
    assert "takes" not in text and "took 1.20 s." in text and "start-ups together" in text and "16%" in text
    text = repro_time({**saved, "benchmark_step_after_seconds": 1.0})[0]
    assert "took 1.20 s before the run and 1.00 s after it." in text
