"""The README stays true: its results block is what `python -m frozenbridge.tools.report` makes from metrics/."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.tools.report import END, START, render, update

ROOT = Path(__file__).resolve().parents[1]


def test_readme_results_match_committed_metrics():
    readme = ROOT / "README.md"
    assert update(readme, ROOT / "metrics") == readme.read_text(), "run: python -m frozenbridge.tools.report"


def test_report_renders_the_training_table_from_metrics(tmp_path):
    (tmp_path / "data.json").write_text(
        '{"train": {"pictures": 5, "questions_count": 5, "questions_binding": 7, "questions_leftmost": 5},'
        ' "test_seen": {"pictures": 1, "questions_count": 1, "questions_binding": 1, "questions_leftmost": 1},'
        ' "test_heldout": {"pictures": 2, "questions_count": 2, "questions_binding": 1, "questions_leftmost": 2},'
        ' "train_color_kind": {"red": {"circle": 3, "triangle": 0}}}')
    text = render(tmp_path)
    assert text.startswith(START) and text.endswith(END)
    assert "| train | 5 | 5 | 7 | 5 |" in text and "| red | 3 | 0 |" in text


def test_reference_study_command_is_valid_params():
    """The README's one-command switch to the full reference study sets only keys that exist, to valid values."""
    import re
    import shlex

    import yaml

    from frozenbridge.shapes.params import Params

    text = (ROOT / "README.md").read_text()
    block = text.split("**The full reference study**", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    args = shlex.split(block.replace("\\\n", " "))
    assert args[:3] == ["dvc", "exp", "run"]
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    for flag, assignment in zip(args[3::2], args[4::2]):
        assert flag == "-S"
        key, value = assignment.split("=", 1)
        node = raw
        *parents, leaf = key.split(".")
        for part in parents:
            node = node[part]
        assert leaf in node, f"README sets unknown key {key}"
        node[leaf] = yaml.safe_load(value)
    params = Params.parse(raw)
    assert params.replicates == (0, 1, 2) and params.train.stage1_steps == 400 and params.evaluate.items == 100
    assert re.search(r"replicates=\[0,1,2,3,4\]", text)


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
    rows = converge_table(saved, {"train": {"lr": 0.001}})
    assert any(r.startswith("| lr 1e-3 ◀ | 3 | 1.00 | 100 / 150 (100 / 150) | 200 / 200 (200 / 200) |") for r in rows)
    assert any(r.startswith("| lr 2e-3 | 3 | 0.50 | 100 / 150 (50 / 75) | 300 / 300 (150 / 150) |") for r in rows)
    assert any(r.startswith("| lr 3e-3 | 3 | 1.00 | 100 / 150 (100 / 150) | never / never (— / —) |") for r in rows)
    assert not any("untimed" in r for r in rows)
    assert rows[-1] == ("On the worst seed's seconds to 70%, against the marked setting (200 s): faster by more than 5%: "
                        "lr 2e-3 (150 s); within 5%: none; slower or never there: lr 3e-3.")


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
