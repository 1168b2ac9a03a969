"""The audit's page: audit.md and its figure audit.png, written from the audit's JSON alone.

The page follows the four checks a score needs before it means anything: the score without the picture (the gap to
the best of a blank picture, another picture and none, not the score itself), the score broken down by what the
question needs (its kind), held-out combinations against seen ones, and the failures read (what the wrong answers
were; whether a linear probe finds the detail in the frozen encoder's features). It closes with a direct answer to
"is it ready?". Every number on the page is read from the JSON, and every sentence that states a finding is chosen
by a rule on those numbers (`margin` points, an interval that includes zero), so the prose stays as true as the
tables. Before any gap it says what would make a gap mean something else: runs still learning at their last step, test
pictures that repeat training ones.

One file a part: before.py (what to read first), sections.py (the opening and checks 1-3), failures.py (check 4),
closing.py (without captions, against the shapes study, is it ready?), by the rules in rules.py and the words in
words.py."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.audit.report.before import before_the_gaps
from frozenbridge.audit.report.closing import agreement_section, closing_paragraph, no_captions_paragraph
from frozenbridge.audit.report.failures import section_failures
from frozenbridge.audit.report.rules import MARGIN
from frozenbridge.audit.report.sections import intro, section_controls, section_heldout, section_kinds


def written_by_this_audit(numbers: dict) -> bool:
    """Whether audit.json has what this code's audit_check writes beside its replicates: whether test pictures repeat
    training ones (`repeats`, issue 69). An audit.json written before (one replicate, no learning curve) is not read
    as if it held them."""
    return "repeats" in numbers


def older_page(source: str) -> str:
    """The page for an audit.json an earlier audit_check wrote: what it is and the command that remakes it."""
    return (f"# The audit\n\n`{source}` was written by an earlier `audit_check`: one replicate, before the audit asked "
            "through the study's conditions and read its own learning curve, so this code does not set its numbers "
            "out. `dvc repro audit_check` remakes it (training the audit's replicates first), then `python -m "
            "frozenbridge.tools.report` writes this page. To audit a folder of your own now: `frozenbridge audit "
            "FOLDER` (README: Your own pictures and questions).\n")


def page_text(numbers: dict, figure: str = "audit.png", margin: float | None = None,
              beside_study: list[str] | None = None) -> str:
    """The page's Markdown from the audit's JSON, showing the figure (summary.figure, drawn beside audit.json) at
    `figure`, a link relative to the page. The margin: the argument, else settings.margin of the JSON, else MARGIN.
    `beside_study`: lines that follow the section against the shapes study (the measurement of what moved the two
    apart, tools.audit_against_study). The same numbers give the same text."""
    if margin is None:
        margin = numbers.get("settings", {}).get("margin", MARGIN)
    first = before_the_gaps(numbers)
    lines = [*intro(numbers), "", *([*first, ""] if first else []), *section_controls(numbers, figure), "",
             *section_kinds(numbers, margin), "", *section_heldout(numbers, margin), "",
             *section_failures(numbers, margin), ""]
    if (paragraph := no_captions_paragraph(numbers)) is not None:
        lines += ["## Without captions", "", paragraph, ""]
    if agreement := agreement_section(numbers):
        lines += [*agreement, "", *([*beside_study, ""] if beside_study else [])]
    lines += ["## Is it ready?", "", closing_paragraph(numbers, margin)]
    return "\n".join(lines) + "\n"


def write_page(numbers: dict, path: Path, figure: str = "audit.png", margin: float | None = None) -> Path:
    """page_text written to `path`; returns `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text(numbers, figure, margin))
    return path
