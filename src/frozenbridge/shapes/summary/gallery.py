"""What the model says: a gallery of test pictures, each with its question or caption prompt, the true answer and the
run's output under every condition (the right picture, a blank one, a wrong one, none), right ones marked.

Read from a run's predictions.json (written by shapes_evaluate) and the test pictures in data/shapes/pictures; no
model is loaded, and torch is not imported. The pictures are chosen deterministically: per test set, picture j shows
task j of the tasks scored (caption, count, binding, leftmost, in that order, cycling if more are asked), on the first
item of that task whose picture the row does not show yet; on held-out pairs a question about a held-out pair comes
first. "Right" is exact match after trimming the ends, the rule the scores use (evaluation.exact.exact_match).
"""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from PIL import Image  # noqa: E402

from frozenbridge.shapes.data.vocab import CONDITIONS, TASKS, TEST_SPLITS, TESTS, question_prompt  # noqa: E402
from frozenbridge.shapes.evaluation.exact import exact_match  # noqa: E402

PER_TEST = 4  # pictures per test set
TEST_LABELS = {"seen": "seen pairs", "heldout": "held-out pairs"}
CONDITION_LABELS = {"right": "right picture", "blank": "blank picture", "wrong": "wrong picture", "none": "no picture"}
RIGHT, WRONG = "#2f7d32", "#c0504d"  # the right-picture and wrong-picture colors of figures.CONDITION_COLORS
MARKS = {True: "\u2713", False: "\u2717"}  # check mark, ballot x
WRAP, MAX_LINES = 48, 2  # characters a line of a cell's text, lines an entry (longer ones end in an ellipsis)


def read_test_pictures(pictures_dir: Path) -> dict[str, pa.Table]:
    """Per test set, its pictures' id, PNG and questions, row i = picture i of the predictions."""
    return {test: pq.read_table(Path(pictures_dir) / f"{split}.parquet", columns=["id", "png", "questions"])
            for test, split in TEST_SPLITS.items()}


def about_held_out(item: dict, questions: list[dict]) -> bool:
    """Whether the item's question (as asked of its picture) is about a held-out color-kind pair."""
    return any(question_prompt(q["question"]) == item["prompt"] and q.get("about_held_out") for q in questions)


def choose(by_task: dict[str, list[dict]], questions: list[list[dict]], held_out: bool,
           per_test: int = PER_TEST) -> list[tuple[str, dict] | None]:
    """The (task, item) each of the row's `per_test` cells shows, None where the run has no item for it."""
    tasks = [t for t in TASKS if by_task.get(t)]
    shown: set[int] = set()
    used: set[tuple[str, int]] = set()
    cells: list[tuple[str, dict] | None] = []
    for j in range(per_test):
        if not tasks:
            cells.append(None)
            continue
        task = tasks[j % len(tasks)]
        free = [(i, it) for i, it in enumerate(by_task[task]) if (task, i) not in used]
        if held_out:  # questions about a held-out pair first, in item order (a stable sort)
            free.sort(key=lambda p: not about_held_out(p[1], questions[p[1]["picture"]]))
        pick = next((p for p in free if p[1]["picture"] not in shown), free[0] if free else None)
        if pick is None:
            cells.append(None)
            continue
        used.add((task, pick[0]))
        shown.add(pick[1]["picture"])
        cells.append((task, pick[1]))
    return cells


def _clip(text: str) -> list[str]:
    lines = textwrap.wrap(text, WRAP, break_long_words=True) or [""]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
        lines[-1] = lines[-1][: WRAP - 1].rstrip() + "\u2026"
    return lines


def _write(ax, entries: list[tuple[str, str, str]], size: float = 8.0) -> None:
    """Entries (text, color, weight) top-down in an empty axes, each wrapped to at most MAX_LINES lines."""
    ax.axis("off")
    k = 0
    for text, color, weight in entries:
        for line in _clip(text):
            ax.annotate(line, xy=(0, 1), xycoords="axes fraction", xytext=(0, -k * size * 1.35),
                        textcoords="offset points", va="top", ha="left", fontsize=size, color=color,
                        fontweight=weight, annotation_clip=False)
            k += 1


def gallery(predictions: dict, pictures: dict[str, pa.Table], title: str, out: Path,
            per_test: int = PER_TEST) -> list[dict]:
    """Draw the gallery of one run to `out` (PNG): a row per test set, `per_test` pictures a row, under each its
    prompt, the true answer and the output under each condition, right ones marked in green. Returns what each
    cell shows: test, task, picture (row in the test set), id, prompt, target, outputs and right per condition."""
    tests = [t for t in TESTS if t in predictions]
    heights = [h for _ in tests for h in (2.3, 1.75)]
    fig, axes = plt.subplots(2 * len(tests), per_test, figsize=(3.3 * per_test, sum(heights) + 0.7),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    shown: list[dict] = []
    for r, test in enumerate(tests):
        table = pictures[test]
        questions = table.column("questions").to_pylist()
        cells = choose(predictions[test], questions, test == "heldout", per_test)
        for c, cell in enumerate(cells):
            pic_ax, text_ax = axes[2 * r][c], axes[2 * r + 1][c]
            if cell is None:
                pic_ax.axis("off")
                text_ax.axis("off")
                continue
            task, item = cell
            row = table.slice(item["picture"], 1).to_pylist()[0]
            pic_ax.imshow(Image.open(io.BytesIO(row["png"])))
            pic_ax.set_xticks([])
            pic_ax.set_yticks([])
            for spine in pic_ax.spines.values():
                spine.set_color("#c8c8c8")
            held = ""
            if about_held_out(item, questions[item["picture"]]):
                held = " (with a held-out pair)" if task == "count" else " (about a held-out pair)"
            pic_ax.set_title(f"{TEST_LABELS[test]} #{row['id']}: {task}{held}", fontsize=8.5)
            right = {cond: exact_match(item[cond], item["target"]) for cond in CONDITIONS}
            labels = dict(CONDITION_LABELS)
            if "wrong_picture" in item:
                labels["wrong"] += f" #{table.column('id')[item['wrong_picture']].as_py()}"
            entries = [(item["prompt"], "black", "normal"), (f"true: {item['target']}", "black", "bold")]
            entries += [(f"{MARKS[right[cond]]} {labels[cond]}: {item[cond].strip() or '(nothing)'}",
                         RIGHT if right[cond] else WRONG, "normal") for cond in CONDITIONS]
            _write(text_ax, entries)
            shown.append({"test": test, "task": task, "picture": item["picture"], "id": row["id"],
                          "prompt": item["prompt"], "target": item["target"],
                          "outputs": {cond: item[cond] for cond in CONDITIONS}, "right": right})
    fig.suptitle(f"{title}\n{MARKS[True]} green = exactly the true answer, {MARKS[False]} red = not; conditions: "
                 "the right picture, a blank one, another test picture, no picture", fontsize=9.5)
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=100)
    plt.close(fig)
    return shown


def run_gallery(run: Path, pictures_dir: Path, title: str, out: Path, per_test: int = PER_TEST) -> list[dict]:
    """The gallery of the run in `run` (its predictions.json) on the test pictures in `pictures_dir`."""
    predictions = json.loads((Path(run) / "predictions.json").read_text())
    return gallery(predictions, read_test_pictures(pictures_dir), title, out, per_test)
