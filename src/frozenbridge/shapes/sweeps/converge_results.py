"""What the convergence sweep keeps: one JSON file of settings and their seeds' runs (merged under a lock, since
several workers may share it), the summary over seeds, and the text table the sweep prints."""

from __future__ import annotations

import fcntl
import json
import statistics
import tempfile
from pathlib import Path

from frozenbridge.core.atomic import write_text
from frozenbridge.shapes.sweeps.converge_settings import MODE_KEYS, SETTINGS, THRESHOLDS


def summarize(runs: list[dict], steps: int) -> dict:
    """Median and worst over seeds; a seed that never reached a threshold counts as beyond `steps` (None)."""
    out = {"seeds": len(runs), "step_seconds": round(statistics.median(r["step_seconds"] for r in runs), 4),
           "best_exact": [max((e for _, e in r["curve"]), default=0.0) for r in runs]}
    for t in THRESHOLDS:
        reached = [r[f"steps_to_{t}"] for r in runs]
        ranked = sorted(reached, key=lambda s: float("inf") if s is None else s)
        out[f"median_{t}"] = ranked[(len(ranked) - 1) // 2] if len(ranked) % 2 else _median_or_none(ranked)
        out[f"worst_{t}"] = ranked[-1]
    return out


def _median_or_none(ranked: list) -> float | None:
    a, b = ranked[len(ranked) // 2 - 1], ranked[len(ranked) // 2]
    return None if a is None or b is None else (a + b) / 2


def format_table(results: dict) -> str:
    """Steps, then seconds (steps x s/step), to each threshold: median / worst seed; — = not within the steps."""
    lines = [f"{'setting':<40} {'s/step':>7} " + " ".join(f"{'median/worst to ' + str(t) + '%: steps (s)':>30}"
                                                         for t in THRESHOLDS) + "  best exact per seed", "-" * 136]
    for name, entry in results.items():
        s = {**entry["summary"], "step_seconds": entry.get("step_seconds", entry["summary"]["step_seconds"])}
        cells = []
        for t in THRESHOLDS:
            med, worst = s[f"median_{t}"], s[f"worst_{t}"]
            fmt = lambda v: "—" if v is None else f"{v:g}"  # noqa: E731
            sec = lambda v: "—" if v is None else f"{v * s['step_seconds']:.0f}"  # noqa: E731
            cells.append(f"{fmt(med) + ' / ' + fmt(worst) + ' (' + sec(med) + ' / ' + sec(worst) + ')':>30}")
        lines.append(f"{name:<40} {s['step_seconds']:>7.2f} " + " ".join(cells) + "  " +
                     ", ".join(f"{e:g}" for e in s["best_exact"]))
    return "\n".join(lines)


def save(path: Path, name: str, entry: dict, header: dict) -> None:
    """Merge one setting's entry into the JSON file (several workers may share it: `--only` splits the list)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(Path(tempfile.gettempdir()) / "frozenbridge-converge.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        saved = json.loads(path.read_text()) if path.is_file() else {"results": {}}
        saved.update(header)
        theirs = saved["results"].get(name)
        if theirs is not None and all(theirs.get(k) == entry.get(k) for k in ("overrides", *MODE_KEYS)):
            mine = {r["seed"] for r in entry["runs"]}  # another worker's seeds of the same setting stay
            entry["runs"] = sorted(entry["runs"] + [r for r in theirs["runs"] if r["seed"] not in mine],
                                   key=lambda r: r["seed"])
            entry["summary"] = summarize(entry["runs"], entry["steps"])
        saved["results"][name] = entry
        known = [k for k in SETTINGS if k in saved["results"]]  # the table follows SETTINGS, extras after
        saved["results"] = {k: saved["results"][k] for k in known + [k for k in saved["results"] if k not in known]}
        write_text(path, json.dumps(saved, indent=2) + "\n")
