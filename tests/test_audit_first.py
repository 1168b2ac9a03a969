"""What the audit page says before any gap: a run still learning at its last step (read from its own loss curve) and
test pictures that repeat training ones (the same file, or the same features under another name); both told first,
with the setting to raise, and the probe's "does not use it" held back while the run was still learning."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import torch

from frozenbridge.audit.data.example import write_example_folder
from frozenbridge.audit.data.folder import read_audit_folder
from frozenbridge.audit.evaluation.curve import FALLING, learning_curve, phase_curve
from frozenbridge.audit.evaluation.repeats import repeats
from frozenbridge.audit.report.closing import closing_paragraph
from frozenbridge.audit.report.page import page_text
from test_audit_page import numbers


def write_history(path: Path, phases: dict[str, list[float]]) -> Path:
    rows, step = ["step,phase,loss"], 0
    for phase, losses in phases.items():
        for loss in losses:
            step += 1
            rows.append(f"{step},{phase},{loss}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_loss_still_falling_at_the_end_is_read_as_still_learning(tmp_path):
    falling = [1.0 - 0.005 * i for i in range(150)]  # last 30 steps' mean 0.1 below the 30 before: 28% of 0.36
    flat = [0.5 + 0.01 * (i % 2) for i in range(150)]  # noise around a level
    curve = learning_curve(write_history(tmp_path / "history.csv", {"stage1": flat, "stage2": falling}))
    assert curve["stage1"]["still_falling"] is False and curve["stage1"]["setting"] == "audit.train.stage1_steps"
    assert curve["stage2"]["still_falling"] is True and curve["stage2"]["window"] == 30
    assert curve["stage2"]["fall"] > FALLING
    assert phase_curve([1.0] * 9) is None  # too short for two windows of five


def test_just_under_the_threshold_is_not_still_learning():
    before, last = 1.0, 1.0 - FALLING + 0.001
    assert phase_curve([before] * 5 + [last] * 5)["still_falling"] is False  # windows of 5: the last two fifths
    assert phase_curve([before] * 5 + [1.0 - FALLING] * 5)["still_falling"] is True


def test_a_noisy_plateau_is_not_still_learning():
    """Windows whose means differ by 8% while single losses swing by 50%: a plateau's chance, not a trend."""
    a = [0.6, 0.2, 0.7, 0.3, 0.65, 0.25, 0.7, 0.2, 0.6, 0.3]  # mean 0.45
    b = [0.55, 0.2, 0.65, 0.25, 0.6, 0.2, 0.65, 0.2, 0.55, 0.25]  # mean 0.41
    curve = phase_curve(a * 3 + a + b)  # 50 steps: windows of 10, the last two a and b
    assert curve["fall"] >= FALLING and curve["before"] - curve["last"] < 2 * curve["error"]
    assert curve["still_falling"] is False


def learning(n: dict, phase: str = "stage2", fall: float = 0.2) -> dict:
    n = copy.deepcopy(n)
    n["training"]["curves"] = {"0": {phase: {"steps": 150, "window": 30, "before": 0.5, "last": 0.4, "fall": fall,
                                             "still_falling": fall >= FALLING,
                                             "setting": f"audit.train.{phase}_steps"}}}
    return n


def test_still_learning_is_said_first_and_names_the_setting():
    text = page_text(learning(numbers()))
    first = text.split("## Read this first", 1)[1].split("\n## ", 1)[0]
    assert "still learning at the last question step" in first and "20% below the 30 before" in first
    assert "Raise `audit.train.stage2_steps` (now 150)" in first
    assert text.index("## Read this first") < text.index("## 1. Without the picture")
    closing = closing_paragraph(learning(numbers()))
    assert closing.startswith("Not yet: the runs were still learning when they stopped; train more question steps "
                              "(`audit.train.stage2_steps`) before reading the gaps")
    # the probe finds count in the encoder and the model lags it: "does not use it" waits for a trained run
    assert "does not use it yet: it was still learning" in closing
    assert "yet (still learning)" in text


def test_a_run_that_stopped_learning_gets_no_first_section():
    text = page_text(learning(numbers(), fall=0.01))
    assert "## Read this first" not in text and "still learning" not in text
    assert "the connector and the language model are where to look" in closing_paragraph(numbers())


def test_repeated_test_pictures_are_found_by_bytes_and_by_features(tmp_path):
    root = write_example_folder(tmp_path / "folder")
    folder = read_audit_folder(root)
    first_train = folder.train.pictures[0]
    copied, renamed = folder.test.pictures[0], folder.test.pictures[1]
    shutil.copyfile(first_train.path, copied.path)  # the same bytes
    train = torch.randn(folder.train.n_pictures, 4, 3).half()
    test = torch.randn(folder.test.n_pictures, 4, 3).half()
    test[1] = train[2]  # another file whose features equal a training picture's
    found = repeats(read_audit_folder(root), train, test)
    assert found == [{"test": copied.file_name, "train": first_train.file_name, "same": "file"},
                     {"test": renamed.file_name, "train": folder.train.pictures[2].file_name, "same": "features"}]


def test_no_repeats_in_distinct_pictures(tmp_path):
    folder = read_audit_folder(write_example_folder(tmp_path / "folder"))
    train = torch.arange(folder.train.n_pictures * 12, dtype=torch.float32).reshape(-1, 4, 3)
    test = -1 - torch.arange(folder.test.n_pictures * 12, dtype=torch.float32).reshape(-1, 4, 3)
    assert repeats(folder, train, test) == []


def test_repeats_are_said_first():
    n = copy.deepcopy(numbers())
    n["repeats"] = [{"test": "t1.png", "train": "a.png", "same": "file"},
                    {"test": "t2.png", "train": "b.png", "same": "features"}]
    first = page_text(n).split("## Read this first", 1)[1].split("\n## ", 1)[0]
    assert ("The test repeats training: 1 test picture with the same bytes as a training picture and 1 test picture "
            "with the same features as a training picture (t1.png repeats a.png; t2.png repeats b.png).") in first


def test_the_terminal_says_first_what_the_page_says_first():
    """`frozenbridge audit`'s closing lines: a run still learning and a repeated test picture come before the gap."""
    from frozenbridge.cli.audit import show_audit

    row = {"audit": "out/audit.md", "questions": 247, "right": 20.24, "best_control": "blank", "control": 20.24,
           "gap": 0.0, "gap_interval": [-6.33, 5.02],
           "read_first": ["The run was still learning at the last question step: ...", "The test repeats training: ..."]}
    lines = show_audit(row).splitlines()
    assert lines[0] == "read this first: The run was still learning at the last question step: ..."
    assert lines[1] == "read this first: The test repeats training: ..."
    assert lines[2].startswith("247 test questions: 20.24% right") and lines[3] == "the audit: out/audit.md"
    assert show_audit({**row, "read_first": []}).startswith("247 test questions")
