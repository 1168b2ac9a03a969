"""How the audit page writes its numbers, lists and Markdown tables."""

from __future__ import annotations


def num(value: float) -> str:
    """A number as the page prints it: at most two decimals, no trailing zeros, never "-0"."""
    return f"{round(float(value), 2) + 0.0:g}"


def loss_text(value: float) -> str:
    """A training loss: four significant figures."""
    return f"{float(value):.4g}"


def counted(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def pct(value: float) -> str:
    return f"{num(value)}%"


def interval_text(block: dict) -> str:
    lo, hi = block["gap_interval"]
    return f"[{num(lo)}, {num(hi)}]"


def joined(words: list[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def md_cell(text) -> str:
    """Free text (a question, an answer) safe inside a Markdown table cell."""
    return "" if text is None else str(text).replace("|", "\\|").replace("\n", " ")


def md_row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_table(head: list[str], rows: list[list]) -> list[str]:
    return [md_row(head), md_row(["---"] * len(head)), *(md_row(r) for r in rows)]


def as_sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def kind_label(kind: str) -> str:
    return "all questions" if kind == "all" else kind
