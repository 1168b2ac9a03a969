"""The audit's page: its numbers are the JSON's, each probe verdict and each answer to "is it ready?" is chosen by
its rule, the held-out section and the no-captions paragraph take both their forms, the shapes study's medians read
from its scores.json, and writing twice gives the same bytes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from frozenbridge.audit.evaluation.agreement import study_reference
from frozenbridge.audit.report.closing import closing_paragraph
from frozenbridge.audit.report.page import write_page
from frozenbridge.audit.report.rules import probe_verdict
from frozenbridge.audit.summary.figure import draw_audit

ROOT = Path(__file__).resolve().parents[1]
CONTROLS = ("blank", "wrong", "none")


def block(right: float, blank: float, other: float, none: float, interval: tuple[float, float], *,
          questions: int = 20, pictures: int = 10, prior: float = 25.0, from_wording: int = 12) -> dict:
    """One Block as audit.json writes it: the best control is the highest of the three, the gap right minus it."""
    score = {"right": right, "blank": blank, "wrong": other, "none": none}
    best = max(CONTROLS, key=lambda c: score[c])
    return {"questions": questions, "pictures": pictures, "score": score, "prior": prior,
            "prior_from_wording": from_wording, "best_control": best, "gap": round(right - score[best], 2),
            "gap_interval": list(interval)}


def failures(wrong: int, another: int, blank: int, other: int) -> dict:
    return {"wrong": wrong, "classes": {"another_question": another, "blank_answer": blank, "other": other}}


def numbers(*, ready: bool = True, heldout: bool = False, captions: bool = True, reference: dict | None = None,
            agreement: bool = False) -> dict:
    """A synthetic audit.json: color, count and shape questions; `ready` False puts shape's interval across 0."""
    kinds = {"color": block(86.67, 31.5, 20.0, 25.0, (41.5, 68.25), questions=15),
             "count": block(72.5, 30.0, 12.5, 30.0, (28.75, 55.0), questions=10),
             "shape": (block(91.25, 40.0, 33.33, 35.0, (38.5, 62.0), questions=12) if ready
                       else block(61.25, 58.75, 33.33, 35.0, (-4.5, 9.75), questions=12))}
    overall = block(84.38, 33.81, 22.41, 29.75, (43.12, 57.93), questions=37, pictures=18, prior=27.5,
                    from_wording=29)
    seen_heldout = None
    if heldout:
        seen_heldout = {
            "seen": {"overall": block(88.0, 30.0, 20.0, 25.0, (50.5, 65.5), questions=25),
                     "kinds": {"color": block(90.0, 30.0, 20.0, 25.0, (48.0, 71.0), questions=10),
                               "count": block(80.0, 30.0, 10.0, 30.0, (30.0, 66.0), questions=8),
                               "shape": block(95.0, 40.0, 30.0, 35.0, (40.0, 70.0), questions=7)}},
            "heldout": {"overall": block(71.43, 35.0, 25.0, 30.0, (20.25, 51.75), questions=12),
                        "kinds": {"color": block(80.0, 35.0, 20.0, 25.0, (21.0, 66.0), questions=5),
                                  "count": block(50.0, 30.0, 15.0, 30.0, (-5.0, 45.0), questions=2),
                                  "shape": block(84.0, 41.0, 37.0, 35.0, (20.0, 65.0), questions=5)}},
        }
    fails = failures(12, 7, 1, 4)
    fails["kinds"] = {"color": failures(5, 5, 0, 0), "count": failures(5, 0, 1, 4), "shape": failures(2, 2, 0, 0)}
    fails["examples"] = [
        {"file_name": f"pic0{i}.png", "question": "What color is the square?", "kind": "color", "answer": "red",
         "said": "blue", "blank": "green", "class": "another_question"} for i in range(1, 6)
    ] + [{"file_name": "odd|name.png", "question": "How many?", "kind": "count", "answer": "3", "said": "2",
          "blank": "2", "class": "blank_answer"}] + [
        {"file_name": f"more{i}.png", "question": "How many?", "kind": "count", "answer": "4", "said": "5",
         "blank": "2", "class": "other"} for i in range(4)]
    return {
        "folder": {"folder": "/data/my-products",
                   "train": {"pictures": 40, "questions": 90, "captions": 40 if captions else 0, "heldout": 0,
                             "kinds": {"color": 30, "count": 30, "shape": 30}, "unkinded": 0, "unlisted": 0},
                   "test": {"pictures": 18, "questions": 37, "captions": 0, "heldout": 6 if heldout else 0,
                            "kinds": {"color": 15, "count": 10, "shape": 12}, "unkinded": 0, "unlisted": 3},
                   "kinds": ["color", "count", "shape"], "untrained_kinds": [], "has_captions": captions,
                   "has_heldout": heldout},
        "settings": {"vision": "tiny-siglip", "language": "tiny-qwen", "stage1_steps": 250, "stage2_steps": 150,
                     "seed": 7, "precision": "bf16", "device": "cpu"},
        "training": {"stage1": {"steps": 250, "final_loss": {"0": 0.1234}} if captions else None,
                     "stage2": {"steps": 150, "final_loss": {"0": 0.0567}}, "curves": {"0": {}}},
        "repeats": [],
        "checks": {"conditions": ["right", "blank", "wrong", "none"], "overall": overall, "kinds": kinds,
                   "seen_heldout": seen_heldout, "failures": fails},
        "probe": {"input": "the mean of the frozen encoder's 7 x 7 grid, 256 numbers a picture",
                  "kinds": {"color": {"closed": True, "wordings": 2, "questions": 15, "classes": 4, "probe": 92.5,
                                      "chance": 25.0, "model": 86.67},
                            "count": {"closed": True, "wordings": 1, "questions": 10, "classes": 3, "probe": 70.0,
                                      "chance": 33.33, "model": 40.0},
                            "shape": {"closed": True, "wordings": 1, "questions": 12, "classes": 3, "probe": 38.0,
                                      "chance": 33.33, "model": 91.25},
                            "size": {"closed": False, "why": "its answers are open text, not a few classes"}}},
        "study_reference": reference,
        "agreement": (agreement_numbers()                       if agreement else None),
    }


def agreement_numbers() -> dict:
    """Two rows as agreement() writes them: held-out binding's gap, where the audit is above the study in all five
    pairs, and seen count's right picture, where the pairs go both ways."""
    from frozenbridge.core.paired import statistics_of

    def row(test, kind, what, audit, study):
        reps = [str(r) for r in range(5)]
        diffs = [round(a - b, 2) for a, b in zip(audit, study)]
        return {"test": test, "kind": kind, "what": what, "audit": dict(zip(reps, audit)),
                "audit_items": 113 if test == "heldout" else 120, "study_items": 60,
                "study": dict(zip(reps, study)),
                "audit_spread": {"median": sorted(audit)[2], "min": min(audit), "max": max(audit)},
                "study_spread": {"median": sorted(study)[2], "min": min(study), "max": max(study)},
                "within": min(study) <= sorted(audit)[2] <= max(study), "paired": statistics_of(diffs)}
    rows = [row("heldout", "binding", "gap", [30.0, 28.0, 25.0, 33.0, 29.0], [6.0, 10.0, -5.0, 13.0, 7.0]),
            row("seen", "count", "right", [90.0, 85.0, 93.0, 70.0, 88.0], [91.0, 80.0, 95.0, 75.0, 83.0])]
    return {"recipe": "caption_qa", "rows": rows, "within": sum(r["within"] for r in rows),
            "differ": sum(r["paired"]["supported"] is not None for r in rows),
            "study_stage1_steps": {"0": 300, "1": 250, "2": 250, "3": 250, "4": 250}}


def page(tmp_path: Path, n: dict, name: str = "out") -> str:
    path = write_page(n, tmp_path / name / "audit.md")
    draw_audit(n, tmp_path / name / "audit.png")
    assert path == tmp_path / name / "audit.md" and (tmp_path / name / "audit.png").stat().st_size > 0
    text = path.read_text()
    assert "](audit.png)" in text
    return text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_page_carries_the_json_numbers(tmp_path):
    n = numbers()
    text = page(tmp_path, n)
    assert text.startswith("# Audit of my-products\n")
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## 1. Without the picture", "## 2. By kind", "## 3. Held-out combinations",
                     "## 4. The failures read", "## Is it ready?"]
    intro = text.split("## 1.", 1)[0]
    for fact in ("`/data/my-products`", "40 pictures, 40 captions and 90 questions", "18 pictures and 37 questions",
                 "`tiny-siglip`", "`tiny-qwen`", "250 steps", "final loss 0.1234", "150 steps", "final loss 0.0567",
                 "seed 7", "bf16", "color (15), count (10), shape (12)", "3 pictures"):
        assert fact in intro
    controls = section(text, "1. Without the picture")
    assert "| all questions | 37 | 84.38% | 33.81% | 22.41% | 29.75% | 27.5% | a blank picture | " \
           "50.57 [43.12, 57.93] |" in controls
    assert "| count | 10 | 72.5% | 30% | 12.5% | 30% | 25% | a blank picture | 42.5 [28.75, 55] |" in controls
    assert "adds 50.57 points (interval 43.12 to 57.93," in controls
    assert "For every kind the gap's interval lies above zero" in controls
    assert "29 of the 37 questions" in controls
    assert "![" in controls and "](audit.png)" in controls
    kinds = section(text, "2. By kind")
    assert "most for color questions (gap 55.17 points" in kinds and "least for count ones (gap 42.5 points" in kinds
    assert "Every kind the test asks was also asked in training." in kinds
    fails = section(text, "4. The failures read")
    assert "12 of the 37 test questions wrong" in fails
    assert "| all questions | 12 | 7 (58.33%) | 1 (8.33%) | 4 (33.33%) |" in fails
    assert "| count | 5 | 0 (0%) | 1 (20%) | 4 (80%) |" in fails
    assert "The commonest wrong answer was another question's answer (7 of 12)." in fails
    assert "8 of the wrong answers:" in fails and "more1.png" in fails and "more2.png" not in fails
    assert "odd\\|name.png" in fails  # a pipe in a file name does not break the table


def test_a_kind_whose_interval_includes_zero_is_named_and_the_answer_is_not_yet(tmp_path):
    n = numbers(ready=False)
    text = page(tmp_path, n)
    assert "For shape the gap's interval includes zero" in section(text, "1. Without the picture")
    assert "| shape | 12 | 61.25% | 58.75% | 33.33% | 35% | 25% | a blank picture | 2.5 [-4.5, 9.75] |" in text
    closing = closing_paragraph(n)
    assert closing.startswith("Not yet: for shape the gap's interval is not above zero")
    assert "The picture matters for color and count, not for shape." in closing
    assert "84.38%" in closing and "a blank picture, gets 33.81%" in closing and "interval 43.12 to 57.93" in closing
    assert section(text, "Is it ready?").strip() == closing


def test_the_answer_is_yes_when_every_kind_clears_the_margin_and_not_yet_when_one_does_not():
    n = numbers()
    closing = closing_paragraph(n)
    assert closing.startswith("On these checks, yes: for every kind the picture adds at least 10 points")
    assert "No test picture was marked held-out" in closing
    assert "Most wrong answers (7 of 12) were the right answer to another question on the same picture" in closing
    # count's gap is 42.5 points: a margin above it turns the same numbers into "not yet" for count
    assert closing_paragraph(n, margin=45).startswith("Not yet: for count the picture adds under 45 points")


def test_the_margin_comes_from_the_json_settings_unless_given(tmp_path):
    n = numbers()
    n["settings"]["margin"] = 45.0
    text = page(tmp_path, n, "settings")
    assert "Not yet: for count the picture adds under 45 points" in section(text, "Is it ready?")
    assert "at a margin of 45 points" in text
    assert "On these checks, yes" in (write_page(n, tmp_path / "given.md", margin=10.0)).read_text()


def test_a_run_without_stage_2_says_so(tmp_path):
    n = numbers()
    n["training"]["stage2"] = None
    intro = page(tmp_path, n).split("## 1.", 1)[0]
    assert "trained for 250 steps on the training captions (final loss 0.1234)." in intro
    assert "Stage 2 did not run" in intro


def test_each_probe_verdict_follows_its_rule(tmp_path):
    n = numbers()
    fails = section(page(tmp_path, n), "4. The failures read")
    assert "| color | 15 | 2 | 4 | 92.5% | 25% | 86.67% | the encoder holds it and the model uses it |" in fails
    assert "| count | 10 | 1 | 3 | 70% | 33.33% | 40% | the encoder holds it; the model does not use it |" in fails
    assert "| shape | 12 | 1 | 3 | 38% | 33.33% | 91.25% | a linear probe does not find it in the encoder's " \
           "features |" in fails
    assert "Not probed: size, its answers are open text, not a few classes." in fails
    assert "The probe reads the mean of the frozen encoder's 7 x 7 grid, 256 numbers a picture." in fails
    closing = closing_paragraph(n)
    assert "For count a linear probe finds the answer in the encoder's features but the model does not use it" \
        in closing
    assert "For shape the model does better than a linear probe on the encoder's features, so the probe is no " \
        "guide there." in closing
    weak = copy.deepcopy(n)
    weak["probe"]["kinds"]["shape"]["model"] = 47.99
    assert "For shape a linear probe does not find it in the encoder's features and the model scores less than " \
        "10 points above the probe, so more question data is unlikely to help." in closing_paragraph(weak)
    # the margin's edges: probe exactly chance + margin finds it; model exactly probe - margin does not use it
    edge = {"closed": True, "questions": 5, "wordings": 1, "classes": 2, "chance": 50.0}
    assert probe_verdict({**edge, "probe": 60.0, "model": 50.0}) == "unused"
    assert probe_verdict({**edge, "probe": 60.0, "model": 50.01}) == "used"
    assert probe_verdict({**edge, "probe": 59.99, "model": 10.0}) == "absent"
    assert probe_verdict({"closed": True, "questions": 0, "why": "no test question of this kind"}) is None
    assert probe_verdict({"closed": False, "why": "open answers"}) is None


def test_the_heldout_section_takes_both_forms(tmp_path):
    none = section(page(tmp_path, numbers(), "none"), "3. Held-out combinations")
    assert '"heldout": true' in none and "test/metadata.jsonl" in none and "|" not in none
    n = numbers(heldout=True)
    text = page(tmp_path, n, "marked")
    held = section(text, "3. Held-out combinations")
    assert "| all questions | 25 | 88% | 30% | 58 [50.5, 65.5] | 12 | 71.43% | 35% | 36.43 [20.25, 51.75] |" in held
    assert "| count | 8 | 80% | 30% | 50 [30, 66] | 2 | 50% | 30% | 20 [-5, 45] |" in held
    assert "answers 71.43% with the right picture, against 88% on combinations seen" in held
    assert "16.57 points lower, more than 10" in held
    assert "held-out falls more than 10 points below seen for count and shape." in held
    closing = closing_paragraph(n)
    assert closing.startswith("Not yet: held-out combinations score 71.43%, 16.57 points below seen ones (88%).")
    assert "No test picture was marked held-out" not in closing
    # held-out within the margin: the section says it holds up, and the answer is yes
    close = copy.deepcopy(n)
    close["checks"]["seen_heldout"]["heldout"]["overall"] = block(82.5, 35.0, 25.0, 30.0, (30.0, 60.0))
    close["checks"]["seen_heldout"]["heldout"]["kinds"]["count"] = block(75.0, 30.0, 15.0, 30.0, (20.0, 60.0))
    close["checks"]["seen_heldout"]["heldout"]["kinds"]["shape"] = block(90.0, 41.0, 37.0, 35.0, (20.0, 65.0))
    held = section(page(tmp_path, close, "close"), "3. Held-out combinations")
    assert "5.5 points lower, within 10: it holds up" in held and "falls more than" not in held
    assert closing_paragraph(close).startswith("On these checks, yes:")
    assert "no more than 10 points below seen ones" in closing_paragraph(close)
    assert "Held-out combinations score 82.5% against 88% seen." in closing_paragraph(close)
    # one kind falling more than the margin, the whole not: still "not yet", naming the kind
    one = copy.deepcopy(close)
    one["checks"]["seen_heldout"]["heldout"]["kinds"]["shape"] = block(84.0, 41.0, 37.0, 35.0, (20.0, 65.0))
    assert closing_paragraph(one).startswith("Not yet: held-out shape questions score more than 10 points below")
    # every marked picture held out: no seen side to compare with, said so, and no comparison made
    alone = copy.deepcopy(close)
    alone["checks"]["seen_heldout"]["seen"] = None
    held = section(page(tmp_path, alone, "alone"), "3. Held-out combinations")
    assert "Every test picture is held-out: 82.5% with the right picture, with no seen combinations" in held
    assert "Every test picture is marked held-out, so there are no seen combinations" in closing_paragraph(alone)


def test_the_no_captions_paragraph_with_and_without_the_study(tmp_path):
    assert "## Without captions" not in page(tmp_path, numbers(), "captions")
    unrun = numbers()
    unrun["training"]["stage1"] = None
    assert "Stage 1 did not run, so the connector learned from questions alone, though the training pictures have " \
           "captions." in section(page(tmp_path, unrun, "unrun"), "Without captions")
    bare = page(tmp_path, numbers(captions=False), "bare")
    paragraph = section(bare, "Without captions")
    assert "Stage 1 was skipped" in paragraph and "%" not in paragraph
    intro = bare.split("## 1.", 1)[0]
    assert "trained for 150 steps on the training questions (final loss 0.0567)." in intro
    assert "Stage 1 did not run: the training pictures have no captions." in intro
    reference = study_reference(ROOT / "metrics" / "shapes" / "scores.json")
    assert reference is not None
    cited = section(page(tmp_path, numbers(captions=False, reference=reference), "cited"), "Without captions")
    b = {r: reference[r]["heldout"]["binding"] for r in ("qa", "caption_qa")}
    s = {r: reference[r]["seen"]["binding"] for r in ("qa", "caption_qa")}
    assert f"held-out pairs scored {b['caption_qa']:g}% after captions then questions and {b['qa']:g}% from " \
        "questions alone" in cited
    assert f"On seen pairs the two scored {s['caption_qa']:g}% and {s['qa']:g}%." in cited
    assert "medians of its replicates" in cited


def test_study_reference_reads_the_real_scores_and_refuses_what_it_cannot(tmp_path):
    path = ROOT / "metrics" / "shapes" / "scores.json"
    scores = json.loads(path.read_text())
    reference = study_reference(path)
    assert set(reference) == {"qa", "caption_qa"}
    for recipe in ("qa", "caption_qa"):
        for test in ("seen", "heldout"):
            assert reference[recipe][test] == {task: scores[recipe][test][task]["right"]["median"]
                                               for task in ("count", "binding", "leftmost")}
    assert study_reference(tmp_path / "missing.json") is None
    (tmp_path / "caption-only.json").write_text(json.dumps({"caption": scores["caption"]}))
    assert study_reference(tmp_path / "caption-only.json") is None


def test_agreement_rows_are_counted_and_tabled(tmp_path):
    text = page(tmp_path, numbers(agreement=True))
    part = section(text, "Against the shapes study")
    assert "The paired interval excludes zero on 1 of the 2 rows: binding, held-out, gap." in part
    assert "over 5 replicates, its median and exact interval (93.75% coverage)" in part
    assert "| binding, held-out, gap | 29 [25, 33] | 7 [-5, 13] | 22 [18, 30] | audit higher |" in part
    assert "| count, seen, right picture | 88 [70, 93] | 83 [75, 95] | -1 [-5, 5] | no difference shown |" in part
    assert "within the study's range on 1 of the 2 rows" in part
    assert ("What still differs on purpose: the audit asks every test question of a kind and test set (113 to 120 a "
            "cell), the study the first 60 of each.") in part
    assert ("The audit trains stage 1 for 250 caption steps; the study's rule stopped its replicates at 300, 250, "
            "250, 250 and 250, so replicates 1, 2, 3 and 4 took the same steps from the same seeds in both.") in part
    assert text.index("## Against the shapes study") < text.index("## Is it ready?")


def test_untrained_kinds_questions_without_a_kind_and_no_wrong_answers(tmp_path):
    n = numbers()
    n["folder"]["untrained_kinds"] = ["count"]
    n["checks"]["kinds"]["(no kind)"] = block(70.0, 65.0, 40.0, 50.0, (-2.5, 12.5), questions=4)
    n["checks"]["failures"] = {**failures(0, 0, 0, 0), "kinds": {}, "examples": []}
    text = page(tmp_path, n)
    assert "| (no kind) | 4 | 70% | 65% | 40% | 50% | 25% | a blank picture | 5 [-2.5, 12.5] |" in text
    assert "For (no kind) the gap's interval includes zero" in text
    kinds = section(text, "2. By kind")
    assert "The test asks count questions, which training never did (count 72.5%, gap 42.5 points)." in kinds
    assert "(no kind)" not in kinds  # best and worst are among named kinds only
    assert "answered every test question right" in section(text, "4. The failures read")
    closing = closing_paragraph(n)
    assert closing.startswith("Not yet: for (no kind) the gap's interval is not above zero")
    assert "It got every test question right with its picture." in closing


def test_one_kind_no_kind_and_a_commonest_class_short_of_half(tmp_path):
    n = numbers()
    n["checks"]["kinds"] = {"color": n["checks"]["kinds"]["color"]}
    n["checks"]["failures"] = {**failures(10, 4, 3, 3), "kinds": {"color": failures(10, 4, 3, 3)},
                               "examples": []}
    text = page(tmp_path, n, "one")
    assert "Every named test question is of one kind, color (gap 55.17 points)." in text
    assert "The commonest wrong answers (4 of 10) were" in closing_paragraph(n)
    n["checks"]["failures"].update(failures(6, 3, 3, 0))
    assert "The commonest wrong answers were another question's answer and its blank-picture answer (3 of 6 " \
           "each)." in page(tmp_path, n, "tie")
    n["checks"]["kinds"] = {}
    n["checks"]["failures"]["kinds"] = {}
    text = page(tmp_path, n, "none")
    assert "No test question names a kind" in section(text, "2. By kind")
    assert closing_paragraph(n).startswith("On these checks, yes: over all questions the picture adds at least 10")


@pytest.mark.parametrize("heldout", [False, True], ids=["failures panel", "held-out panel"])
def test_writing_twice_gives_the_same_bytes(tmp_path, heldout):
    n = numbers(heldout=heldout, captions=False)
    first, second = tmp_path / "a", tmp_path / "b"
    for where in (first, second):
        write_page(n, where / "audit.md")
        draw_audit(n, where / "audit.png")
    for name in ("audit.md", "audit.png"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    assert (first / "audit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_timing_section_reads_the_bench_and_says_over_when_it_is(tmp_path):
    """docs/audit.md's timing (tools.report.audit_timing) from a saved `bench audit`: its minutes, the goal's verdict
    and the largest part, each from the rows; no section where no bench is saved."""
    from frozenbridge.bench.rows import row, value_row
    from frozenbridge.tools.report import AUDIT_BENCH, audit_timing

    assert audit_timing(tmp_path) == []
    machine = {"device": "CPU, 2 cores", "torch": "2", "mode": "m", "date": "d", "tool": "python -m frozenbridge.bench "
               "audit", "train_pictures": 1000, "test_pictures": 200, "heldout_pictures": 100,
               "questions_per_picture": 8, "stage1_steps": 200, "stage2_steps": 150}

    def saved(encode: float, train: float) -> list[str]:
        rows = [value_row("audit part: encode: every picture", encode, "s"), value_row("audit part: train", train, "s"),
                row("audit of 1000 pictures", "goal (s)", 1200.0, "measured (s)", encode + train)]
        (tmp_path / "bench").mkdir(exist_ok=True)
        (tmp_path / "bench" / AUDIT_BENCH).write_text(json.dumps({"machine": machine, "rows": rows}))
        return audit_timing(tmp_path)

    fast = " ".join(saved(encode=60.0, train=540.0))
    assert "took 10.0 minutes" in fast and "That is within the 20 minutes" in fast and "(0.50 of it)" in fast
    assert "The largest part, train, took 90% of the chain." in fast
    slow = " ".join(saved(encode=900.0, train=600.0))
    assert "took 25.0 minutes" in slow and "That is over the 20 minutes" in slow and "The largest part, encode, took 60%" in slow


def test_an_audit_json_written_before_replicates_gets_the_command_that_remakes_it(tmp_path):
    """tools.report on an audit.json an earlier audit_check wrote (no replicates in its settings, no repeats): the
    page says what it is and `dvc repro audit_check`, never this code's sections read from fields it lacks; one that
    this code wrote is set out."""
    from frozenbridge.audit.report.page import written_by_this_audit
    from frozenbridge.tools.report import AUDIT_NUMBERS, audit_page

    old = {"settings": {"stage1_steps": 200, "stage2_steps": 150}, "training": {"stage1": {"final_loss": 0.5}},
           "checks": {}, "folder": {}}
    (tmp_path / AUDIT_NUMBERS).parent.mkdir(parents=True)
    (tmp_path / AUDIT_NUMBERS).write_text(json.dumps(old))
    page = audit_page(tmp_path)
    assert "was written by an earlier `audit_check`" in page and "`dvc repro audit_check` remakes it" in page
    assert len(page.splitlines()) == 3
    assert written_by_this_audit(numbers()) and not written_by_this_audit(old)
