"""The scoring rule, kept free of torch so the gallery and the reports can import it alone: an output is right when
it equals the true answer after trimming the ends; a score is a percent of items; a gap is the right picture's
score over the best control's."""

from __future__ import annotations


def exact_match(prediction: str, target: str) -> bool:
    return prediction.strip() == target.strip()


def percent(hits: int, n: int) -> float:
    return round(100.0 * hits / n, 2) if n else 0.0


def gap(scores: dict[str, float]) -> float:
    return round(scores["right"] - max(scores["blank"], scores["wrong"], scores["none"]), 2)
