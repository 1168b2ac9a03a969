"""The results page's section on reruns: which conditions change which bits, read from the saved rerun measurements
(bench/reruns/*.json, made with tools.rerun_check one condition at a time), never typed. A condition's reruns are
compared with the measurement's reference rerun; where they differ, the fields that moved are counted."""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.tools.machines import machine_name

FOLDER = "reruns"  # under bench/: apart from bench/*.json, which the page renders as benchmark tables


def moved(condition: dict) -> dict[str, str]:
    """{file or field: how much of it moved} over a condition's reruns that differ from the reference."""
    out: dict[str, str] = {}
    for rerun in condition["reruns"]:
        against = rerun["against_reference"]
        if isinstance(against, str):
            continue
        for name, how in against.items():
            if how == "same":
                continue
            fields = how if isinstance(how, dict) else {name: how}
            out.update(fields)
    return out


def short(command: str) -> str:
    return command.removeprefix("python -m frozenbridge.tools.rerun_check ")


def study_sentence(twice: dict | None) -> list[str]:
    """The whole study's stages rerun twice, where the measurement kept it."""
    if not twice:
        return []
    same = twice.get("rerun_2_against_rerun_1", {})
    return [f"`{short(twice['command'])}` exited {twice['exit']}: {twice['verdict']} "
            f"({sum(v == 'same' for v in same.values())} of {len(same)} outputs the same bytes)."]


def condition_row(c: dict) -> str:
    fields = moved(c)
    shown = "; ".join(f"{k} {v}" for k, v in list(fields.items())[:4]) + ("; ..." if len(fields) > 4 else "")
    return (f"| `{short(c['command'])}` | "
            f"{c['same_bytes_as_reference']} | {'yes' if c.get('same_bytes_among_its_reruns') else 'no'} | "
            f"{shown or 'nothing'} |")


def rerun_section(bench: Path) -> list[str]:
    """A paragraph and a table a saved measurement; nothing where bench/reruns/ holds none."""
    out = []
    for path in sorted((bench / FOLDER).glob("*.json")):
        saved = json.loads(path.read_text())
        conditions = saved.get("conditions") or []
        if not conditions:
            continue
        changed = [f"`{short(c['command'])}`" for c in conditions if moved(c)]
        kept = [c for c in conditions if not moved(c)]
        reruns = sum(len(c["reruns"]) for c in kept)
        stage = saved["what"].split(" ", 1)[0]
        out += [f"On the {machine_name(saved['machine'])}, {stage} was rerun one condition at a time "
                f"(`{path.relative_to(bench.parent)}`). Its {reruns} reruns under {len(kept)} of the "
                f"{len(conditions)} conditions gave the reference's bytes.",
                *([f"Only {', '.join(changed)} changed bits; the table counts what moved."] if changed else
                  ["No condition changed a bit."]), "",
                "| condition | same bytes as the reference | its reruns the same | what moved |",
                "|---|---|---|---|", *(condition_row(c) for c in conditions), "",
                *study_sentence(saved.get("one_token_study_twice")), ""]
    return out
