"""The verdict table: each rule decides hand-made cells as its docstring says, and a changed metric flips a verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frozenbridge.tools.verdicts.claims import CLAIMS, verdict_counts, verdict_rows, verdict_table
from frozenbridge.tools.verdicts.rules import (FAILS, HOLDS, OPEN, Ahead, AtLeast, AtMost, Beats, Cell, Evidence,
                                               Inside, NoDifference, judge, paired_cell)

ROOT = Path(__file__).resolve().parents[1]


def test_threshold_rules_decide_each_cell_by_its_values():
    assert judge(AtLeast(20), Evidence([Cell("a", (25, 30))])) == (HOLDS, "it passes")
    assert judge(AtLeast(20), Evidence([Cell("a", (10, 19.9))]))[0] == FAILS
    verdict, why = judge(AtLeast(20), Evidence([Cell("a", (10, 30))]))
    assert verdict == OPEN and "disagree" in why
    assert judge(AtMost(25), Evidence([Cell("a", (0, 25))]))[0] == HOLDS
    assert judge(Inside(0.086, 0.282), Evidence([Cell("a", (0.44, 0.45))]))[0] == FAILS
    # one failing cell decides the claim, and is named; an open cell only when none fails
    verdict, why = judge(AtLeast(20), Evidence([Cell("good", (30,)), Cell("bad", (5,)), Cell("mixed", (5, 30))]))
    assert verdict == FAILS and why == "bad: 5"
    assert judge(AtLeast(20), Evidence([Cell("good", (30,)), Cell("mixed", (5, 30))]))[0] == OPEN


def test_paired_rules_need_the_interval_at_90_percent():
    two = paired_cell("binding", [-19, -29], 60)  # two replicates: [min, max] covers 50%
    assert judge(Ahead("second"), Evidence([two]))[0] == OPEN
    verdict, why = judge(Ahead("second"), Evidence([paired_cell("binding", [-19], 60)]))
    assert verdict == OPEN and "covers the median with 0%, 1 replicate: fewer than 90%" in why
    five = paired_cell("binding", [-19, -29, -5, -12, -40], 60)  # five of five behind: 93.75%
    assert judge(Ahead("second"), Evidence([five])) == (HOLDS, "it passes")
    assert judge(Ahead("first"), Evidence([five]))[0] == FAILS
    mixed = paired_cell("binding", [-19, 3, -5, -12, -40], 60)
    verdict, why = judge(Ahead("second"), Evidence([mixed]))
    assert verdict == OPEN and "includes zero" in why
    # no consistent difference, in points: 3 of 60 questions = 5 points
    small = paired_cell("count", [3, -3, 0, 1, -2], 60)
    assert judge(NoDifference(10), Evidence([small]))[0] == HOLDS
    large = paired_cell("count", [9, 12, 15, 20, 30], 60)  # every difference above 10 points
    assert judge(NoDifference(10), Evidence([large]))[0] == FAILS
    crossing = paired_cell("count", [1, 12, 15, 20, 30], 60)
    assert judge(NoDifference(10), Evidence([crossing]))[0] == OPEN


def test_unpaired_ranges_and_a_claim_nothing_measured():
    assert judge(Beats(), Evidence([Cell("x", ranges=((0.7, 0.8), (0.5, 0.69)))]))[0] == HOLDS
    assert judge(Beats(), Evidence([Cell("x", ranges=((0.5, 0.6), (0.61, 0.7)))]))[0] == FAILS
    assert judge(Beats(), Evidence([Cell("x", ranges=((0.5, 0.65), (0.61, 0.7)))]))[0] == OPEN
    verdict, why = judge(AtLeast(1), Evidence(missing="dvc repro shapes_text"))
    assert verdict == OPEN and "`dvc repro shapes_text`" in why


@pytest.fixture()
def project(tmp_path):
    """A copy of the committed metrics/ and results/."""
    for name in ("metrics", "results"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def rows_by_claim(root: Path) -> dict[str, dict]:
    return {r["claim"]: r for r in verdict_rows(root)}


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_every_claim_gets_a_row_and_the_counts_add_up(project):
    rows = verdict_rows(project)
    assert [r["claim"] for r in rows] == [c.claim for c in CLAIMS]
    assert all(r["verdict"] in (HOLDS, FAILS, OPEN) for r in rows)
    counts = verdict_counts(rows)
    n = {v: sum(r["verdict"] == v for r in rows) for v in (HOLDS, FAILS, OPEN)}
    assert counts == f"{len(rows)} claims: {n[HOLDS]} hold, {n[FAILS]} do not hold, {n[OPEN]} inconclusive"
    table = verdict_table(project)
    assert len([line for line in table if line.startswith("| ") and "---" not in line]) == len(rows) + 1


def test_a_changed_metric_flips_a_verdict(project):
    ceiling = "The adapter reaches the classifier's ceiling"
    adapter = project / "metrics/digits/adapter.json"
    ceiling_of = json.loads(adapter.read_text())["ceiling"]

    def accuracies(*shares):
        return lambda d: d["by_tokens"]["8"].update(replicates={str(i): ceiling_of * s for i, s in enumerate(shares)})
    edit(adapter, accuracies(0.90, 0.89))
    assert rows_by_claim(project)[ceiling]["verdict"] == FAILS
    edit(adapter, accuracies(0.99, 0.97))
    assert rows_by_claim(project)[ceiling]["verdict"] == HOLDS
    edit(adapter, accuracies(0.99, 0.90))
    assert rows_by_claim(project)[ceiling]["verdict"] == OPEN

    binding = "Captioning first helps on held-out binding (paired)"
    paired = project / "metrics/shapes/paired.json"

    def differences(*diffs):
        return lambda d: d["qa vs caption_qa"]["heldout"].update(binding=paired_cell("", list(diffs), 60).paired)
    edit(paired, differences(-19, -29))
    assert rows_by_claim(project)[binding]["verdict"] == OPEN  # two of two ahead: 50% coverage
    edit(paired, differences(-19, -29, -5, -12, -40))
    assert rows_by_claim(project)[binding]["verdict"] == HOLDS
    edit(paired, differences(19, 29, 5, 12, 40))
    assert rows_by_claim(project)[binding]["verdict"] == FAILS

    probe = "A held-out shape's color is easier to read after the stage-1 connector than at the encoder"
    probes = project / "metrics/shapes/probes.json"
    encoder = json.loads(probes.read_text())["places"]["encoder"]["color"]["heldout"]["max"]

    def stage1(low, high):
        return lambda d: d["places"]["stage1"]["color"].update(heldout={"min": low, "median": low, "max": high})
    edit(probes, stage1(encoder - 10, encoder - 5))
    assert rows_by_claim(project)[probe]["verdict"] == FAILS
    edit(probes, stage1(encoder + 1, encoder + 3))
    assert rows_by_claim(project)[probe]["verdict"] == HOLDS


def test_a_claim_outside_the_default_run_reads_saved_results_or_names_its_command(project):
    lora = "LoRA gives no consistent gain"
    row = rows_by_claim(project)[lora]
    assert row["source"].startswith("results/all-recipes/metrics/shapes/paired.json, from dvc exp run")
    shutil.rmtree(project / "results")
    row = rows_by_claim(project)[lora]
    assert row["verdict"] == OPEN and "shapes.recipes=[caption,qa,caption_qa,caption_qa_lora" in row["why"]


# ---- a verdict that holds on raw scores, and the side it stands on not above its best control ----

BINDING, LEFTMOST = ("Captioning first helps on held-out binding (paired)",
                     "Captioning first helps on held-out leftmost (paired)")


def test_a_verdict_on_raw_scores_says_where_its_side_is_not_above_its_best_control(project):
    """caption_qa is ahead of qa on held-out binding, but its own gap over the best control is not above zero in
    every replicate: the row says so with the cell's numbers. Leftmost holds too, and there caption_qa's gap is
    above zero in every replicate (only qa's, the side the claim does not stand on, is not): no note."""
    rows = rows_by_claim(project)
    scores = json.loads((project / "metrics/shapes/replicates.json").read_text())["caption_qa"]["heldout"]
    gaps = [r["gap"] for r in scores["binding"].values()]
    assert rows[BINDING]["verdict"] == HOLDS and min(gaps) <= 0  # the committed numbers: the case the note is for
    rights = sorted(r["right"] for r in scores["binding"].values())
    assert rows[BINDING]["note"].startswith(f"on raw scores only: caption_qa's held-out binding is {rights[2]:g}% right "
                                            f"but {sorted(gaps)[2]:g} [{min(gaps):g}, {max(gaps):+g}] points over its "
                                            "best control (")
    line = next(line for line in verdict_table(project) if line.startswith(f"| shapes | {BINDING} |"))
    assert line.endswith(f"| holds ({rows[BINDING]['note']}) |")
    assert rows[LEFTMOST]["verdict"] == HOLDS and rows[LEFTMOST]["note"] == ""
    assert min(r["gap"] for r in scores["leftmost"].values()) > 0

    def lift(d):  # every caption_qa held-out binding replicate above its best control
        for r in d["caption_qa"]["heldout"]["binding"].values():
            r["gap"] = 5.0
    edit(project / "metrics/shapes/replicates.json", lift)
    rows = rows_by_claim(project)
    assert rows[BINDING]["verdict"] == HOLDS and rows[BINDING]["note"] == ""


def test_the_raw_scores_note_reads_the_sides_the_rule_stands_on_and_only_a_verdict_that_holds():
    from frozenbridge.tools.verdicts.grounds import Ground, raw_scores_note

    weak = Ground("first", "a's seen count", (40.0, 50.0), (-5.0, 10.0), "no picture's 35%")
    assert raw_scores_note(Ahead("first"), HOLDS, (weak,)) == (
        "on raw scores only: a's seen count is 45% right but 2.5 [-5, +10] points over its best control (no "
        "picture's 35%), not above zero in every replicate")
    assert raw_scores_note(Ahead("second"), HOLDS, (weak,)) == ""  # the claim stands on the other side
    assert raw_scores_note(NoDifference(10), HOLDS, (weak,)) != ""  # no difference stands on both sides
    assert raw_scores_note(Ahead("first"), FAILS, (weak,)) == ""  # only a verdict that holds
    strong = Ground("first", "a's seen count", (40.0, 50.0), (5.0, 10.0))
    assert raw_scores_note(Ahead("first"), HOLDS, (strong,)) == ""
