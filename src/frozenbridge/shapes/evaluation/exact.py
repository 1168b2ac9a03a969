"""The scoring rule, free of torch so the gallery and the reports can import it alone: core.controls's, the audit's
too. An output is right when it equals the true answer after trimming the ends; a score is a percent of items; a gap
is the right picture's score over the best control's."""

from __future__ import annotations

from frozenbridge.core.controls import gap, percent  # noqa: F401 (the study's rule is the shared one)


def exact_match(prediction: str, target: str) -> bool:
    return prediction.strip() == target.strip()
