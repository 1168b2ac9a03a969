"""The README and docs/results.md stay true: the README's headline table and the whole results page are what
`python -m frozenbridge.tools.report` makes from metrics/, results/ and bench/."""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.tools.headline_tables import headline_table
from frozenbridge.tools.report import END, START, render_results, update_readme

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
    # metrics made from two replicates while params.yaml names three: the count is the metrics', and the gap is said
    (shapes / "replicates.json").write_text(json.dumps(_reps([10.0, 20.0], [30.0, 40.0])))
    assert headline_table(tmp_path)[0].startswith("Medians over 2 replicates (params.yaml now names 3: `dvc repro`")


def _reps(qa: list[float], cq: list[float]) -> dict:
    return {"qa": {"heldout": {"binding": {str(i): {"right": v} for i, v in enumerate(qa)}}},
            "caption_qa": {"heldout": {"binding": {str(i): {"right": v} for i, v in enumerate(cq)}}}}


def _pairs(diffs: list[int]) -> dict:  # paired.json for qa vs caption_qa, held-out binding, of 60 questions
    from frozenbridge.shapes.summary.paired import statistics_of

    return {"qa vs caption_qa": {"heldout": {"binding": {**statistics_of(diffs), "items": 60}}}}


def test_reading_quotes_the_paired_statistics_and_counts_replicates():
    from frozenbridge.shapes.report.reading import paired_sentence, stage1_sentence

    text = paired_sentence(_reps([40.0, 50.0, 30.0], [70.0, 50.0, 20.0]), _pairs([-18, 0, 6]))
    assert "more questions right in 1, fewer in 1, as many in 1 of 3 replicates" in text
    assert "% right, qa vs caption_qa: 40 vs 70, 50 vs 50, 30 vs 20 (replicates 0 to 2)." in text
    assert "Median 0 of 60 questions, 75% interval [-6, +18], sign test p = 1" in text  # caption_qa − qa
    assert "the interval includes zero: no difference supported" in text and " ahead" not in text
    assert paired_sentence({"qa": {}}, {}) is None
    assert paired_sentence(_reps([40.0], [70.0]), {}) is None  # no paired.json: no sentence
    cell = {"right": {"median": 75.0, "min": 70.0, "max": 80.0}}
    scores = {"caption": {t: {"caption": cell} for t in ("seen", "heldout")}}
    zero = {"median": 0.0, "min": 0.0, "max": 0.0}
    controls = {"caption": {t: {"caption": {"blank": zero, "wrong": {**zero, "max": 3.33}, "none": zero}}
                            for t in ("seen", "heldout")}}
    assert "no replicate gets more than 3.33% right" in stage1_sentence(scores, controls)



def test_reading_says_ahead_only_where_the_interval_supports_it():
    """Two of two replicates with caption_qa more right is not a finding: [min, max] of two covers 50%."""
    from frozenbridge.shapes.report.analysis_tables import paired_analysis_table
    from frozenbridge.shapes.report.reading import paired_sentence

    text = paired_sentence(_reps([0.0, 15.0], [21.67, 65.0]), _pairs([-13, -30]))
    assert "more questions right in 2, fewer in 0, as many in 0 of 2 replicates" in text
    assert "Median +21.5 of 60 questions, 50% interval [+13, +30], sign test p = 0.5" in text
    assert "no difference supported (2 replicates cannot give an interval of 90% or more" in text
    assert " ahead" not in text and "helps" not in text and "beats" not in text
    nine = [-3, -5, 2, -8, -1, -4, -6, -2, -7]  # qa − caption_qa; caption_qa more right in 8 of 9, interval [+1, +7]
    text = paired_sentence(_reps([50.0] * 9, [60.0] * 9), _pairs(nine))
    assert "96.1% interval [+1, +7], sign test p = 0.0391: caption_qa ahead: the 96.1% interval excludes zero" in text
    straddle = [-3, -5, 2, -8, 1, -4, -6, -2, -7]  # caption_qa more right in 7 of 9, interval [-1, +7]
    text = paired_sentence(_reps([50.0] * 9, [60.0] * 9), _pairs(straddle))
    assert "[-1, +7]" in text and "the interval includes zero: no difference supported" in text
    assert " ahead" not in text
    mix = _pairs(straddle)["qa vs caption_qa"]
    table = paired_analysis_table({**_pairs(nine), "caption_qa vs caption_qa_mix": mix})
    assert "| qa vs caption_qa | heldout | binding | 1 | 0 | 8 | -4 of 60 | [-7, -1] (96.1%) | 0.0391 | caption_qa |" \
        in table
    assert ("| caption_qa vs caption_qa_mix | heldout | binding | 2 | 0 | 7 | -4 of 60 | [-7, +1] (96.1%) | 0.1797 "
            "| none |") in table


def test_headline_row_names_the_paired_statistics_not_a_bare_count(tmp_path):
    """The paired row's label stays short; its statistics go in the row's note, which the README prints under the
    table (a count of replicates alone would say nothing of the evidence)."""
    from frozenbridge.tools.headline import shapes_rows
    from frozenbridge.tools.headline_tables import headline_table

    shapes = tmp_path / "metrics" / "shapes"
    shapes.mkdir(parents=True)
    (shapes / "scores.json").write_text(json.dumps({"qa": {"seen": {}, "heldout": {}}}))
    (shapes / "paired.json").write_text(json.dumps(_pairs([-13, -30])))
    (row,) = shapes_rows(shapes)
    assert (row.key, row.median, row.unit) == ("caption_qa_ahead_heldout_binding", 2, "of 2")
    assert "sign test" not in row.label and len(row.label.split()) <= 15
    assert row.note.endswith("(caption_qa − qa: median +21.5 of 60, 50% interval [+13, +30], sign test p = 0.5: "
                             "no difference supported)"[1:-1])
    assert f"Statistics: {row.note}." in headline_table(tmp_path)
    (shapes / "paired.json").write_text(json.dumps(_pairs([-3, -5, -2, -8, -1, -4, -6, -2, -7])))
    assert shapes_rows(shapes)[0].note.endswith("96.1% interval [+2, +7], sign test p = 0.0039: caption_qa ahead")

def test_convergence_table_marks_the_default_and_names_what_beat_it():
    from frozenbridge.shapes.report.convergence_tables import converge_table

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
    assert rows[-5:] == ["On the worst seed's seconds to 70%, against the marked setting (200 s):", "",
                         "- faster by more than 5%: lr 2e-3 (150 s).", "- within 5%: none.",
                         "- slower or never there: lr 3e-3."]


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
