"""The rules the audit page states its findings by: a gap's interval not above zero, a gap under the margin,
held-out combinations more than the margin below seen ones, and the probe's verdict on a kind."""

from __future__ import annotations

from frozenbridge.audit.summary.figure import NO_KIND, kind_order


MARGIN = 10.0
VERDICTS = {
    "unused": "the encoder holds it; the model does not use it",
    "used": "the encoder holds it and the model uses it",
    "absent": "a linear probe does not find it in the encoder's features",
}


def control_score(block: dict) -> float:
    return block["score"][block["best_control"]]


def not_above_zero(block: dict) -> bool:
    """The gap's interval includes zero or lies below it: the picture makes no clear difference."""
    return block["gap_interval"][0] <= 0


def adds_little(block: dict, margin: float) -> bool:
    """The interval is above zero but the gap is under the margin: the picture adds little."""
    return not not_above_zero(block) and block["gap"] < margin


def named_kinds(blocks: dict) -> list[str]:
    return [k for k in kind_order(blocks) if k != NO_KIND]


def probe_verdict(entry: dict, margin: float = MARGIN) -> str | None:
    """"unused", "used" or "absent" for a probed kind (see VERDICTS), None for one not probed: the probe at least
    `margin` points above chance finds the detail; the model then uses it unless it scores `margin` points or more
    below the probe."""
    if not entry.get("closed") or not entry.get("questions"):
        return None
    if entry["probe"] < entry["chance"] + margin:
        return "absent"
    return "unused" if entry["model"] <= entry["probe"] - margin else "used"


def seen_and_heldout(seen_heldout: dict | None) -> tuple[dict | None, dict | None]:
    """The overall blocks of the seen and held-out sides; None for a side with no test pictures."""
    if seen_heldout is None:
        return None, None
    return tuple((seen_heldout.get(side) or {}).get("overall") for side in ("seen", "heldout"))


def heldout_falls(seen: dict | None, held: dict | None, margin: float) -> bool:
    return seen is not None and held is not None and held["score"]["right"] < seen["score"]["right"] - margin


def falling_kinds(seen_heldout: dict, margin: float) -> list[str]:
    seen = (seen_heldout.get("seen") or {}).get("kinds", {})
    held = (seen_heldout.get("heldout") or {}).get("kinds", {})
    return [k for k in kind_order(set(seen) & set(held)) if heldout_falls(seen[k], held[k], margin)]
