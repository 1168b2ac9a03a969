"""The measurement of what moves the audit's gaps away from the study's (tools.audit_against_study): its rungs ask
the items each protocol names (every question or the first 60 of a kind and test set; the wrong picture half the
mixed list away, or within the test set and kind), and the ladder reads each line's move over the line before."""

from __future__ import annotations

import torch

from frozenbridge.shapes.training.split_data import SplitData
from frozenbridge.tools.audit_against_study import RUNGS, asked
from frozenbridge.tools.audit_ladder import LADDER, ladder, ladder_section


def split(pictures: int, offset: int) -> SplitData:
    qs = [[{"type": "count", "question": "How many shapes are there?", "answer": "two"},
           {"type": "binding", "question": "What color is the circle?", "answer": "red" if i % 2 else "blue"}]
          for i in range(pictures)]
    return SplitData([f"c{i}" for i in range(pictures)], qs, [[] for _ in range(pictures)],
                     torch.zeros(pictures, 4, 3) + offset, {})


def rung(name: str):
    return next(p for p in RUNGS if p.name == name)


def test_the_old_rule_crosses_sides_and_the_study_rule_stays_within_them():
    tests = {"seen": split(4, 0), "heldout": split(4, 1)}
    old = asked(tests, rung("audit_before"))
    assert [a.wrong for a in old[("seen", "count")]] == [4, 5, 6, 7]  # half the 8 pictures away: held-out ones
    assert [a.wrong for a in old[("heldout", "binding")]] == [0, 1, 2, 3]
    within = asked(tests, rung("wrong_within"))
    assert [a.wrong for a in within[("seen", "count")]] == [2, 3, 0, 1]
    assert [a.wrong for a in within[("heldout", "binding")]] == [6, 7, 4, 5]  # rows numbered after the seen set
    assert len(asked(tests, rung("first_60"))[("seen", "count")]) == 4  # fewer than 60: all of them


def test_first_60_keeps_the_first_of_each_kind_and_side():
    tests = {"seen": split(70, 0), "heldout": split(3, 1)}
    items = asked(tests, rung("study"))
    assert [a.picture for a in items[("seen", "binding")]] == list(range(60))
    assert len(asked(tests, rung("wrong_within"))[("seen", "binding")]) == 70


def saved() -> dict:
    gaps = {"before": {"audit_before": (30.0, 55.0, 57.0, 57.5)},
            "audit": {"audit_before": (28.0, 50.0, 55.0, 56.0), "wrong_within": (8.0, 30.0, 50.0, 48.0),
                      "first_60": (7.0, 28.0, 49.0, 47.0), "trimmed": (7.0, 28.0, 49.0, 47.0),
                      "study": (7.0, 28.0, 49.0, 47.0)},
            "study": {"study": (6.66, 26.66, 48.33, 46.67)}}
    keys = ("heldout binding", "heldout leftmost", "seen count", "heldout count")
    runs = {"before/0": {}, **{f"audit/{r}": {} for r in range(5)}, **{f"study/{r}": {} for r in range(5)}}
    return {"machine": {"cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16", "date": "2026-12-06"}, "runs": runs,
            "same_inputs": {"blank": True, "test": True, "train": True, "prompts": True},
            "medians": {g: {r: dict(zip(keys, v)) for r, v in rs.items()} for g, rs in gaps.items()}}


def test_the_ladder_reads_each_lines_move():
    lines = ladder(saved())
    assert [(line["group"], line["rung"]) for line in lines] == [(g, r) for g, r, _ in LADDER]
    assert lines[0]["moves"] is None and lines[0]["runs"] == 1 and lines[1]["runs"] == 5
    assert lines[2]["moves"]["heldout binding"] == -20.0 and lines[4]["moves"]["seen count"] == 0.0
    assert lines[-1]["moves"]["heldout binding"] == -0.34  # the study's own runs against the audit's
    section = "\n".join(ladder_section(saved(), "results/x.json"))
    assert "| the wrong picture drawn within the test set and kind, as the study draws it | 5 | 8 (-20) |" in section
    assert "AMD EPYC (AVX512-BF16), 2026-12-06" in section
    assert ("The audit's features of the blank picture, the test pictures and the training pictures are the study's, "
            "bit for bit; so are its prompts.") in section
    assert "The held-out binding gap moved most with the wrong picture drawn within the test set and kind" in section


def test_the_audits_prompts_and_blank_picture_are_the_studys():
    """Two of the differences issue 69 asked about are none by construction, and stay none: the audit's prompts (its
    defaults and params.yaml's) are the study's, and its blank picture is the study's white square."""
    from pathlib import Path

    from frozenbridge.audit.params import AuditParams, load_params
    from frozenbridge.shapes.data.draw import blank
    from frozenbridge.shapes.data.vocab import caption_prompt, question_prompt

    root = Path(__file__).resolve().parents[1]
    for audit in (AuditParams(), load_params(root / "params.yaml").audit):
        assert audit.prompts.caption == caption_prompt()
        assert audit.question_prompt("What color is the circle?") == question_prompt("What color is the circle?")
    from frozenbridge.audit.data.features import white_picture

    size = AuditParams().image_size
    assert blank(size).tobytes() == white_picture(size).tobytes()
