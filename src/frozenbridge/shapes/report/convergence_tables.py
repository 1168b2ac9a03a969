"""The shapes study's stage-1 convergence tables, from the sweeps' files in bench/ (`python -m
frozenbridge.shapes.sweeps.converge`): steps and seconds to 50% and 70% exact captions per setting, the held-out
curve, the model table and the stopping rule's reach. Every number computed.
"""

from __future__ import annotations

import statistics


def _steps(v) -> str:
    return "never" if v is None else f"{v:g}"


def converge_table(saved: dict, params: dict | None) -> list[str]:
    """`python -m frozenbridge.shapes.sweeps.converge`: steps (and seconds) to 50% and 70% exact captions, median and
    worst seed."""
    rows = [f"Stage-1 convergence (`python -m frozenbridge.shapes.sweeps.converge`): exact captions of "
            f"{saved['items']} seen-pair test pictures every {saved['every']} steps; median and worst over the seeds "
            "(a seed is a replicate's initial connector and caption order); \"never\" = not within the steps given. "
            "The setting params.yaml holds is marked ◀.", "",
            "| setting | seeds | s a step | to 50%: median / worst, steps (s) | to 70%: median / worst, steps (s) | "
            "best exact per seed, % |", "|---|---:|---:|---:|---:|---:|"]
    for name, entry in saved["results"].items():
        s = entry["summary"]
        if "step_seconds" not in entry:
            continue  # not timed alone yet (python -m frozenbridge.shapes.sweeps.converge --time-steps N)
        sec = lambda v, e=entry: "—" if v is None else f"{v * e['step_seconds']:.0f}"  # noqa: E731
        cells = [f"{_steps(s[f'median_{t}'])} / {_steps(s[f'worst_{t}'])} ({sec(s[f'median_{t}'])} / "
                 f"{sec(s[f'worst_{t}'])})" for t in (50, 70)]
        mark = " ◀" if params is not None and _matches(entry["overrides"], params) else ""
        rows.append(f"| {name}{mark} | {s['seeds']} | {entry['step_seconds']:.2f} | {cells[0]} | {cells[1]} | "
                    f"{', '.join(f'{e:g}' for e in s['best_exact'])} (of {entry['steps']} steps) |")
    return rows + ([] if params is None else _against_default(saved["results"], params))


def _worst_seconds(entry: dict) -> float:
    worst = entry["summary"]["worst_70"]
    return float("inf") if worst is None else worst * entry["step_seconds"]


NOISE = 0.05  # step times measured a few minutes apart differ by about this much on a shared machine


def _against_default(results: dict, params: dict) -> list[str]:
    """One generated line: which settings beat the marked one on the worst seed's seconds to 70% by more than the
    timing noise, which were level with it, and which were slower."""
    timed = {k: e for k, e in results.items() if "step_seconds" in e}
    default = next((k for k, e in timed.items() if _matches(e["overrides"], params)), None)
    if default is None:
        return []
    mine = _worst_seconds(timed[default])
    others = {k: _worst_seconds(e) for k, e in timed.items() if k != default}
    faster = [f"{k} ({s:.0f} s)" for k, s in others.items() if s < mine * (1 - NOISE)]
    level = [f"{k} ({s:.0f} s)" for k, s in others.items() if mine * (1 - NOISE) <= s <= mine * (1 + NOISE)]
    slower = [k for k, s in others.items() if s > mine * (1 + NOISE)]
    return ["", f"On the worst seed's seconds to 70%, against the marked setting ({mine:.0f} s):", "",
            f"- faster by more than {NOISE:.0%}: {', '.join(faster) or 'none'}.",
            f"- within {NOISE:.0%}: {', '.join(level) or 'none'}.",
            f"- slower or never there: {', '.join(slower) or 'none'}."]


def heldout_curve_table(saved: dict) -> list[str]:
    """`converge --heldout --no-stop`: seen- and held-out-pair exact captions against stage-1 steps, per seed."""
    rows: list[str] = []
    for name, entry in saved["results"].items():
        runs = [r for r in entry["runs"] if "heldout_curve" in r]
        if not runs:
            continue
        seeds = ", ".join(str(r["seed"]) for r in runs)
        rows += [f"Exact captions against stage-1 steps, setting \"{name}\", seeds {seeds} "
                 f"(`python -m frozenbridge.shapes.sweeps.converge --heldout --no-stop`; {saved['items']} pictures of "
                 "each test set):",
                 "", "| stage-1 steps | seen pairs, % (per seed) | held-out pairs, % (per seed) |", "|---:|---:|---:|"]
        steps = sorted({s for r in runs for s, _ in r["curve"]})
        for step in steps:
            seen = [dict(r["curve"]).get(step) for r in runs]
            held = [dict(r["heldout_curve"]).get(step) for r in runs]
            fmt = lambda vals: ", ".join("—" if v is None else f"{v:g}" for v in vals)  # noqa: E731
            rows.append(f"| {step} | {fmt(seen)} | {fmt(held)} |")
        rows.append("")
    return rows


MODEL_EVERY = 50  # the model table shows exact captions every this many steps, up to its longest runs


def _exact_at(run: dict, step: int, steps: int) -> float | None:
    """A seed's exact captions at `step`; a seed stopped early at the highest threshold keeps that score after, up
    to the `steps` its row ran (past them, and for a seed that ran them all, there is nothing to say: None)."""
    curve = dict(run["curve"])
    if step in curve:
        return curve[step]
    last = run["curve"][-1][0] if run["curve"] else steps
    stopped = last < step <= steps and last < steps and run.get("steps_to_70") is not None
    return run["curve"][-1][1] if stopped else None


def _reach(steps: int | None, step_seconds: float | None, of: int) -> str:
    """Steps to a threshold with their seconds in brackets, or "never (of N)"."""
    if steps is None:
        return f"never (of {of})"
    return f"{steps:g}" + ("" if step_seconds is None else f" ({steps * step_seconds:.0f})")


def model_table(saved: dict) -> list[str]:
    """`converge --language NAME`: per language model and setting, exact captions every 50 steps (worst seed, and
    the median; "—" past a row's steps), steps and seconds to 50% and 70% on the worst seed."""
    model_steps = range(MODEL_EVERY, max(e["steps"] for e in saved["results"].values()) + 1, MODEL_EVERY)
    rows = ["Stage-1 convergence by language model (`python -m frozenbridge.shapes.sweeps.converge --language NAME`): "
            f"exact captions of {saved['items']} seen-pair test pictures, % on the worst seed (median in brackets). "
            "Steps and seconds to 50% and 70% on the worst seed: the seconds are the steps x the step time "
            "(--time-steps's, measured alone, where it ran, else the median of the runs'). "
            "\"Never\" = not within the steps run. A seed that reached 70% stopped there and keeps its score.", "",
            "| language model: setting | seeds | " + " | ".join(f"{s} steps" for s in model_steps) +
            " | to 50%, worst: steps (s) | to 70%, worst: steps (s) | s a step |",
            "|---|---:|" + "---:|" * len(model_steps) + "---:|---:|---:|"]
    for name, entry in saved["results"].items():  # a step timed alone (--time-steps), else the runs' own median
        s, runs = entry["summary"], entry["runs"]
        step_s = entry.get("step_seconds", s.get("step_seconds"))
        cells = []
        for step in model_steps:
            at = [_exact_at(r, step, entry["steps"]) for r in runs]
            cells.append("—" if None in at else f"{min(at):.1f} ({statistics.median(at):.1f})")
        reach = [_reach(s[f"worst_{t}"], step_s, entry["steps"]) for t in (50, 70)]
        rows.append(f"| {name} | {s['seeds']} | {' | '.join(cells)} | {reach[0]} | {reach[1]} | "
                    f"{'—' if step_s is None else f'{step_s:.2f}'} |")
    return rows


def _steps_to(curve: list, percent: float) -> int | None:
    return next((s for s, e in curve if e >= percent), None)


def rule_table(saved: dict, params: dict | None) -> list[str]:
    """Stage 1's stopping rule (training.stage1_rule, as params.yaml sets it) read on each seed's training-caption
    curve from `converge --train-curve`: where it stops, and the seen-pair test captions there."""
    from frozenbridge.shapes.params import Params
    from frozenbridge.shapes.training.stage1_rule import is_check, stop_step

    t = Params.parse(params or {}).shapes.train
    u = t.stage1_until
    entries = {n: e for n, e in saved["results"].items() if all("train_curve" in r for r in e["runs"])}
    if u.share == 0 or not entries or saved["items"] != u.items:
        return []
    goal = 100 * u.share
    rows = [f"Stage 1's stopping rule as params.yaml sets it (`shapes.train.stage1_until`): from step {t.stage1_steps} "
            f"on, every {u.every} steps, the first {u.items} training pictures are captioned and stage 1 stops once "
            f"{goal:g}% are exact, at {u.max_steps} steps at most. Read here on each seed's training-caption curve "
            "(`converge --train-curve`, the same captions the rule reads); \"—\" where a seed's run ended before the "
            f"rule would stop. The test captions are the {saved['items']} seen-pair test pictures of the table above.",
            "", f"| language model: setting | seeds | steps the rule trains, per seed | seen-pair test captions exact "
            f"at its stop, %: worst (median) | seeds at {goal:g}% or more there | worst seed: steps to {goal:g}% on "
            "test | worst seed: seconds the rule trains |", "|---|---:|---|---:|---:|---:|---:|"]
    for name, entry in entries.items():
        stops, exact = [], []
        for r in entry["runs"]:
            stop = stop_step([(s, e) for s, e in r["train_curve"] if is_check(s, t)], t)
            ran = stop <= r["steps_run"] and stop in dict(r["curve"])
            stops.append(stop if ran else None)
            exact.append(dict(r["curve"])[stop] if ran else None)
        step_s = entry.get("step_seconds", entry["summary"].get("step_seconds"))
        to_goal = [_steps_to(r["curve"], goal) for r in entry["runs"]]
        worst_to = "never" if None in to_goal else f"{max(to_goal)}"
        if None in exact:
            cells = "—", "—", worst_to, "—"
        else:
            cells = (f"{min(exact):.1f} ({statistics.median(exact):.1f})", f"{sum(e >= goal for e in exact)} of "
                     f"{len(exact)}", worst_to, f"{max(stops) * step_s:.0f}" if step_s is not None else "—")
        rows.append(f"| {name} | {len(stops)} | {', '.join('—' if s is None else str(s) for s in stops)} | "
                    + " | ".join(cells) + " |")
    return rows


MOVED = ("merge", "hidden", "prefix_tokens", "order", "norm", "positions", "init_scale")  # to connector.mlp.


def _matches(overrides: dict, params: dict) -> bool:
    """Whether params.yaml (a mapping) holds every override, keys under `shapes:` as the sweep spells them (runs made
    before the MLP's knobs moved under connector.mlp spell them connector.merge, ...)."""
    def get(key: str):
        node = params.get("shapes", {})
        if key.startswith("connector.") and key.split(".", 1)[1] in MOVED:
            key = key.replace("connector.", "connector.mlp.", 1)
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return all(get(k) == v for k, v in overrides.items())
