"""The shapes study's vocabulary in one place, importable without torch: colors and kinds, recipe names, tasks,
conditions (core.controls's, the audit's too), test sets and the prompts.

Summaries, figures and report tables read these names; training and evaluation spell nothing of their own.
"""

from __future__ import annotations

from frozenbridge.core.controls import CONDITIONS, CONTROLS  # noqa: F401 (which picture a prompt is shown with)

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


def caption_prompt() -> str:
    return "Caption:"


def question_prompt(question: str) -> str:
    return f"Question: {question} Answer:"
