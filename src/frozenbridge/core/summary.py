"""What every study's summary shares: a number's spread over replicates, and reading a metrics file that may not
exist yet (README tables render what is there)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path


def spread(values, ndigits: int = 6) -> dict:
    """{'median', 'min', 'max'} of `values`, each rounded to `ndigits`."""
    values = list(values)
    return {"median": round(statistics.median(values), ndigits), "min": round(min(values), ndigits),
            "max": round(max(values), ndigits)}


def read_json_if_present(path: str | Path) -> dict | None:
    path = Path(path)
    return json.loads(path.read_text()) if path.is_file() else None
