"""The shapes study's vocabulary in one place, importable without torch: colors and kinds, recipe names, tasks,
conditions, test sets, the prompts, and the wrong-picture rule.

Summaries, figures and report tables read these names; training and evaluation spell nothing of their own.
"""

from __future__ import annotations

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 38, 38),
    "green": (34, 160, 60),
    "blue": (37, 84, 220),
    "yellow": (240, 200, 20),
    "purple": (136, 56, 196),
    "orange": (245, 130, 20),
}
KINDS = ("circle", "square", "triangle")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

SPLITS = ("train", "test_seen", "test_heldout")  # the generated splits, one Parquet file each
TEST_SPLITS = {"seen": "test_seen", "heldout": "test_heldout"}  # test set name -> its split
TESTS = tuple(TEST_SPLITS)

RECIPE_NAMES = ("caption", "qa", "caption_qa", "caption_qa_lora", "caption_qa_mix")
TASKS = ("caption", "count", "binding", "leftmost")
QUESTION_TASKS = TASKS[1:]
CONDITIONS = ("right", "blank", "wrong", "none")  # which picture the prompt is shown with
CONTROLS = CONDITIONS[1:]


def caption_prompt() -> str:
    return "Caption:"


def question_prompt(question: str) -> str:
    return f"Question: {question} Answer:"


def wrong_pictures(pictures: list[int]) -> list[int]:
    """For each item, the picture of the item half the list away (the next one with another picture, if equal).

    Choosing among the task's own items means a wrong-picture prompt is usually a right-picture prompt of another
    item, so its answer is already generated."""
    m = len(pictures)
    out = []
    for i, pic in enumerate(pictures):
        others = (pictures[(i + m // 2 + j) % m] for j in range(m))
        out.append(next((p for p in others if p != pic), pic))
    return out
