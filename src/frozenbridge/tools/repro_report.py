"""The results page's time paragraph and the README's line on command one, from a timed `dvc repro`
(bench/repro.json, tools.repro_timing), with the run's shapes training against its floor (tools.run_floor)."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.tools.headline_tables import STUDY_LABELS
from frozenbridge.tools.run_floor import run_floor
from frozenbridge.tools.where_it_runs import shapes_step_seconds, stage_replicate, timed_replicates

OTHER_STUDIES = ("digits", "retrieval", "onetoken", "audit")  # timed apart from the shapes study


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def _step_times(saved: dict) -> str:
    before, after = saved["benchmark_step_seconds"], saved.get("benchmark_step_after_seconds")
    if after is None:
        return f"{before:.2f} s"
    return f"{before:.2f} s before the run and {after:.2f} s after it"


def _other_studies(categories: dict, total: float) -> str:
    others = {name: categories[f"{name} study"] for name in OTHER_STUDIES if f"{name} study" in categories}
    if not others:
        return ""
    listed = ", ".join(f"the {STUDY_LABELS.get(name, name)} study {_minutes(seconds)}"
                       for name, seconds in others.items())
    return f". The other studies: {listed}, so the shapes study {_minutes(total - sum(others.values()))}"


def untimed(saved: dict, root: Path | None) -> tuple[list[str], int]:
    """The stages of today's pipeline (root/dvc.lock) that the timed run neither ran nor found up to date, because
    they were added after it was timed, and how many stages the pipeline has; ([], 0) without a dvc.lock."""
    lock = root / "dvc.lock" if root is not None else None
    if lock is None or not lock.is_file():
        return [], 0
    stages = list((read_yaml(lock.read_text()) or {}).get("stages") or {})
    timed = set(saved["stages"]) | set(saved.get("skipped_stages") or [])
    return [name for name in stages if name not in timed], len(stages)


def untimed_sentence(saved: dict, root: Path | None) -> str:
    """" That run predates N of the pipeline's M stages (names), which its time leaves out." or ""."""
    names, count = untimed(saved, root)
    if not names:
        return ""
    return (f" That run predates {len(names)} of the pipeline's {count} stages ({', '.join(names)}), which its time "
            "leaves out.")


def cpu_label(m: dict) -> str:
    """The CPU that made the numbers, where the timing recorded it: kernels differ between CPUs, and so do draws; and
    the allocator, where it recorded one (tcmalloc's steps are faster than glibc's)."""
    if "cpu_model" not in m:
        return ""
    return f" ({m['cpu_model']}, bf16 through {m['bf16_path']}{', ' + m['malloc'] if 'malloc' in m else ''})"


def repro_time(saved: dict, root: Path | None = None) -> list[str]:
    """`python -m frozenbridge.tools.repro_timing`: the default run's wall time, by kind of stage, and its machine."""
    m, c, total = saved["machine"], saved["categories"], saved["total_seconds"]
    steps = shapes_step_seconds(saved)
    rest = total - steps - c.get("data", 0.0) - sum(c.get(f"{name} study", 0.0) for name in OTHER_STUDIES)
    return [f"**Time** (`python -m frozenbridge.tools.repro_timing`, {m['date']}): `dvc repro` {_which(saved)} took "
            f"**{_minutes(total)}** on a {m['cpu']} {m['device'].upper()} machine{cpu_label(m)} "
            f"(torch {m['torch']}). Its benchmark step (batch 16 captions, 49 image tokens) took {_step_times(saved)}."
            f"{_skipped(saved)}{untimed_sentence(saved, root)} Data "
            f"(shapes_data, shapes_encode) {_minutes(c.get('data', 0.0))}; training stages "
            f"{_minutes(c.get('training', 0.0))}, of which {_minutes(steps)} inside training steps; evaluation "
            f"{_minutes(c.get('evaluation', 0.0))}; summaries and figures "
            f"{_minutes(c.get('summaries and figures', 0.0))}{_other_studies(c, total)}. Evaluation and the "
            f"{saved['stage_count']} stage start-ups together: {_minutes(rest)}, {rest / total:.0%} of the run. "
            "On another machine, scale by the ratio of benchmark steps (`python -m frozenbridge.tools.repro_timing` "
            f"prints it first).{_at_floor(saved, root)}", ""]


def _which(saved: dict) -> str:
    """Which stages the timed run ran: every one, or all but those DVC found up to date (_skipped)."""
    return f"of {saved['stage_count']} stages" if saved.get("skipped_stages") else "of every stage"


def _skipped(saved: dict) -> str:
    """The stages DVC found up to date (a clean clone's analyses, whose inputs came out as committed), which are then
    not in the run's time: a sentence of its own, or nothing where it ran every stage."""
    skipped = saved.get("skipped_stages")
    if not skipped:
        return ""
    return (f" {len(skipped)} more stages were up to date, their inputs the same bytes as committed, so DVC skipped "
            f"them and they are not in this time: {', '.join(skipped)}.")


def _at_floor(saved: dict, root: Path | None) -> str:
    """The run's shapes training against its floor on the same CPU (tools.run_floor), where both were measured."""
    found = run_floor(saved, root / "bench") if root is not None else None
    if found is None or "shapes" not in found["studies"]:
        return ""
    s = found["studies"]["shapes"]
    left = f" Left out: {', '.join(found['left_out'])} (no floor at their sizes)." if found["left_out"] else ""
    shapes = saved["total_seconds"] - sum(saved["categories"].get(f"{name} study", 0.0) for name in OTHER_STUDIES)
    rest = shapes - s["steps_seconds"]
    return (f" At its floor (`python -m frozenbridge.tools.run_floor`): the shapes study's {len(s['stages'])} stage-1 "
            f"and question-recipe stages spent {_minutes(s['steps_seconds'])} inside their training steps; those "
            f"steps' matrix products alone, at the floor `bench floor` timed on the same CPU (bench/"
            f"{found['floor_file']}), come to {_minutes(s['floor_seconds'])}, "
            f"{s['steps_seconds'] / s['floor_seconds']:.2f}× less. No cut of the step's overhead goes below that; "
            f"a shorter run needs fewer or smaller steps, or a faster machine. With its other stages as this run "
            f"timed them ({_minutes(rest)}: data, evaluation, start-ups, analyses), the shapes study at that floor "
            f"would take {_minutes(rest + s['floor_seconds'])} (it took {_minutes(shapes)}).{left}")


def command_one_time(saved: dict, replicates: int, root: Path | None = None) -> list[str]:
    """The README's line on how long command one took (bench/repro.json) and what two replicates would have taken:
    the same run's shared stages and those of replicates 0 and 1 (stage names end in their replicate)."""
    total, m = saved["total_seconds"], saved["machine"]
    reps = timed_replicates(saved)
    two = total - sum(sec for name, sec in saved["stages"].items()
                      if (stage_replicate(name) or 0) > 1)
    line = (f"Command 1 (`dvc repro`, {len(reps)} replicates of every study) took **{_minutes(total)}** on a "
            f"{m['cpu']} machine{cpu_label(m)}. Its benchmark step took {_step_times(saved)} "
            f"([time](docs/results.md#time) splits it by stage).{untimed_sentence(saved, root)}")
    if len(reps) > 2:
        line += (f" Fewer replicates run in less: `dvc exp run -S 'replicates=[0,1]'` runs two; in that run the "
                 f"shared stages and those of replicates 0 and 1 took {_minutes(two)}.")
    if len(reps) != replicates:
        line += f" That timed run had {len(reps)} replicates; params.yaml now names {replicates}."
    return ["", line]
