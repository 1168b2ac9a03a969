"""The ladder from the audit before issue 69 to the shapes study, read from a saved measurement
(tools.audit_against_study): one difference between the two instruments a line, each gap's median over the line's
runs and its move over the line before; and docs/audit.md's section that shows it. Pure numbers, no torch."""

from __future__ import annotations

from pathlib import Path

MEASURED = Path("results/audit-against-study/rungs.json")  # the committed measurement docs/audit.md reads
GAPS = (("heldout", "binding"), ("heldout", "leftmost"), ("seen", "count"), ("heldout", "count"))  # issue 69's four

# (group, rung, what changes from the line before): from the audit before issue 69 to the study, one change a line
LADDER = (("before", "audit_before", "the audit before issue 69: one run, its own seed stream, its own protocol"),
          ("audit", "audit_before", "the audit's replicates from the study's seed streams (same protocol)"),
          ("audit", "wrong_within", "the wrong picture drawn within the test set and kind, as the study draws it"),
          ("audit", "first_60", "only the first 60 questions of each kind and test set, the study's items"),
          ("audit", "trimmed", "answers compared trimmed only, not lower-cased, as the study compares them"),
          ("audit", "study", "4 answer tokens and one generation call per test set: the study's own protocol"),
          ("study", "study", "the study's own caption_qa runs: stage 1 stopped by its rule, not at a fixed count"))


def ladder(saved: dict) -> list[dict]:
    """The ladder's lines the saved runs hold: group, rung, what changes, the runs' median of each gap, and each
    gap's move over the line before (None on the first line)."""
    out = []
    for group, rung, change in LADDER:
        medians = saved["medians"].get(group, {}).get(rung)
        if medians is None:
            continue
        runs = sum(name.split("/")[0] == group for name in saved["runs"])
        before = out[-1]["gaps"] if out else None
        out.append({"group": group, "rung": rung, "change": change, "runs": runs, "gaps": medians,
                    "moves": None if before is None else {k: round(v - before[k], 2) for k, v in medians.items()}})
    return out


INPUTS = {"blank": "the blank picture", "test": "the test pictures", "train": "the training pictures"}


def inputs_sentences(same: dict | None) -> list[str]:
    """Whether the audit's features and prompts are the study's, as the measurement compared them."""
    from frozenbridge.audit.report.words import joined

    if not same:
        return []
    equal = [INPUTS[k] for k in INPUTS if same.get(k)]
    differ = [INPUTS[k] for k in INPUTS if same.get(k) is False]
    out = []
    if equal:
        out.append(f"The audit's features of {joined(equal)} are the study's, bit for bit"
                   + ("; so are its prompts." if same.get("prompts") else "."))
    if differ:
        out.append(f"Its features of {joined(differ)} differ from the study's.")
    if same.get("prompts") is False:
        out.append("Its prompts differ from the study's.")
    return out


def signed(value: float) -> str:
    return f"{value:+g}" if value else "0"


def ladder_section(saved: dict, source: str) -> list[str]:
    """docs/audit.md's section from the saved measurement (`source` names its file): the ladder as a table, then
    for each gap the line that moved it most."""
    from frozenbridge.tools.machines import machine_name

    lines = saved.get("ladder") or ladder(saved)
    if not lines:
        return []
    m = saved["machine"]
    keys = [f"{side} {kind}" for side, kind in GAPS]
    label = {k: f"{'held-out' if k.startswith('heldout') else 'seen'} {k.split()[1]} gap" for k in keys}
    rows = [f"| {line['change']} | {line['runs']} | " + " | ".join(
        f"{line['gaps'][k]:g}" + ("" if line["moves"] is None else f" ({signed(line['moves'][k])})") for k in keys)
        + " |" for line in lines]
    text = [f"Measured with `python -m frozenbridge.tools.audit_against_study` on the {machine_name(m)}, {m['date']} "
            f"(`{source}`).",
            "Trained runs were asked the study's test questions under a ladder of protocols, from the audit before "
            "issue 69 to the study's, one change a line.",
            "Each cell is the median gap over the line's runs, in points, with its move over the line before.",
            *inputs_sentences(saved.get("same_inputs"))]
    said = []
    for k in keys:
        moved = [line for line in lines[1:] if line["moves"][k]]
        if moved:
            top = max(moved, key=lambda line: abs(line["moves"][k]))
            said.append(f"The {label[k]} moved most with {top['change'].split(':')[0]} "
                        f"({signed(top['moves'][k])} points).")
    table = ["| line | runs | " + " | ".join(label[k] for k in keys) + " |", "|---|---:|" + "---:|" * len(keys),
             *rows]
    return ["## What moved the audit away from the study", "", " ".join(text), "", *table,
            *(["", " ".join(said)] if said else [])]
