"""How fast stage 1 learns to caption: steps and seconds to 50% and 70% exact captions, per setting and seed.

    python -m frozenbridge.shapes.sweeps.converge             # every setting in SETTINGS, seeds 0 1 2 (hours on a CPU)
    python -m frozenbridge.shapes.sweeps.converge --only columns "columns, lr 2e-3" --seeds 0 1 2 3 4
    python -m frozenbridge.shapes.sweeps.converge --setting mine train.lr=3e-3 connector.order=columns
    python -m frozenbridge.shapes.sweeps.converge --jobs 4        # 4 runs at once, the machine's threads split
    python -m frozenbridge.shapes.sweeps.converge --time-steps 8  # then time each setting's step, alone on the machine
    python -m frozenbridge.shapes.sweeps.converge --language Qwen/Qwen2.5-0.5B --json bench/converge-models.json

A setting is a set of overrides of params.yaml keys under `shapes:` (dotted keys: train.lr, connector.merge). For
every seed (a run's replicate index, so seed r is the pipeline's replicate r: its initial connector and caption
order) stage 1 is trained from scratch on the cached training features, and every `--every` steps the captions of
the first `--items` seen-pair test pictures are written greedily and scored by exact match. A run stops at `--steps`
or once it reaches the highest threshold. A decaying schedule runs over the setting's `shapes.train.stage1_steps`, as
in the pipeline, and stays at its floor after.
The table gives, per setting, the median and the worst seed: what a default must be judged on is the worst.
Seconds are steps times the setting's step time measured by `--time-steps` with nothing else running (the sweep
may run as several workers, `--jobs N` or processes started by hand with `--only` splitting the settings, whose
own step times are not the machine's).
`--jobs N` runs the (setting, seed) runs not yet done N at a time in joblib worker processes, each with 1/N of the
threads (`--threads`, else every core) and its own copy of the language model. The runs are seeded, so a run's
numbers do not depend on which worker made it or when; step counts can differ by thread count as bf16 kernels do
(a bf16 backward pass sums in another order on another thread count), and the results do not record it.
Results go to bench/converge.json (kept between calls: finished runs are not redone unless --fresh);
`python -m frozenbridge.tools.report` puts the table in the results page. Needs `dvc repro shapes_encode` first.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import torch

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.step import training_step
from frozenbridge.core.config import read_yaml
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.measure import timed
from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.params import Params, load_params
from frozenbridge.shapes.paths import CODEBOOK, DATA
from frozenbridge.shapes.sweeps.converge_results import format_table, save, summarize
from frozenbridge.shapes.sweeps.converge_settings import (MODE_KEYS, SETTINGS, THRESHOLDS, apply_overrides,
                                                         model_label, parse_override)
from frozenbridge.shapes.training import stage1_rule
from frozenbridge.shapes.training.recipes import STAGE1_PHASE
from frozenbridge.shapes.training.run import design_inputs, new_connector, run_seeds, train_phase
from frozenbridge.shapes.training.split_data import caption_batches, load_split
from frozenbridge.shapes.training.start import setup

log = logging.getLogger("frozenbridge.converge")



@functools.lru_cache(maxsize=None)
def _say_short(items: int, held: int) -> None:
    """One warning line per setting the test set cannot honour (the curve asks many times)."""
    log.warning("shapes.evaluate.items=%d: the test set holds %d pictures; captioning %d", items, held, held)


def caption_accuracy(vlm: VLM, test, items: int, cfg) -> float:
    if items > len(test.captions):
        _say_short(items, len(test.captions))
    return stage1_rule.caption_accuracy(vlm, test, items, cfg)


def run_one(params: Params, seed: int, data, test, lm, device, bf16, steps: int, every: int, items: int,
            heldout=None, stop: bool = True, train_curve: bool = False) -> dict:
    """Stage 1 from scratch for one seed; exact captions every `every` steps (also of held-out-pair pictures when
    `heldout` is given, and of the first `items` training pictures with `train_curve`: what a rule that stops
    training on its own captions would see); stops at the highest threshold when `stop` (with `train_curve`, once
    the pipeline's stage-1 rule has stopped too: `rule_stop` is the step it stops at, training.stage1_rule)."""
    seeds = run_seeds(params.seed, seed)
    connector = new_connector(params, data.meta["output_shape"], lm.width, seeds["init"],
                              **design_inputs(params, lm, CODEBOOK)).to(device)
    vlm = VLM(lm, connector, device, bf16)
    optimizer = torch.optim.AdamW(connector.parameters(), lr=params.shapes.train.lr)
    batches = caption_batches(data, seeds["captions"], params.shapes.train.batch_size)
    curve: list[tuple[int, float]] = []
    heldout_curve: list[tuple[int, float]] = []
    train_seen: list[tuple[int, float]] = []
    history: list = []
    clock = {"train": 0.0, "start": time.perf_counter()}

    def after_step(step: int) -> bool:
        if step % every and step != steps:
            return False
        clock["train"] += time.perf_counter() - clock["start"]
        connector.eval()
        exact = caption_accuracy(vlm, test, items, params.shapes.evaluate)
        curve.append((step, round(exact, 2)))
        if heldout is not None:
            heldout_curve.append((step, round(caption_accuracy(vlm, heldout, items, params.shapes.evaluate), 2)))
        if train_curve:
            train_seen.append((step, round(caption_accuracy(vlm, data, items, params.shapes.evaluate), 2)))
        connector.train()
        log.info("seed %d step %d: loss %.3f, exact captions %.1f%%%s", seed, step, history[-1][2], exact,
                 f" (held-out pairs {heldout_curve[-1][1]:.1f}%)" if heldout is not None else "")
        clock["start"] = time.perf_counter()
        return stop and exact >= max(THRESHOLDS) and (not train_curve or rule_met(train_seen, params))

    train_phase(vlm, data, STAGE1_PHASE, steps, batches, optimizer, history, f"seed {seed}", after_step=after_step,
                schedule=STAGE1_PHASE.schedule(params.shapes.train), schedule_steps=params.shapes.train.stage1_steps)
    done = len(history)
    return {"seed": seed, "curve": curve, **({"heldout_curve": heldout_curve} if heldout is not None else {}),
            **({"train_curve": train_seen, "rule_stop": rule_stop(train_seen, params, done)} if train_curve else {}),
            "steps_run": done, "step_seconds": round(clock["train"] / done, 4),
            "final_loss": round(history[-1][2], 4),
            **{f"steps_to_{t}": next((s for s, e in curve if e >= t), None) for t in THRESHOLDS}}


def rule_checks(train_seen: list, params: Params) -> list:
    return [(s, e) for s, e in train_seen if stage1_rule.is_check(s, params.shapes.train)]


def rule_met(train_seen: list, params: Params) -> bool:
    t = params.shapes.train
    return any(e >= 100 * t.stage1_until.share for _, e in rule_checks(train_seen, params))


def rule_stop(train_seen: list, params: Params, done: int) -> int | None:
    """The step the pipeline's stage-1 rule stops at on this run's training captions; None if the run ended before
    it would (its checks, at --every steps, must fall on the rule's: stage1_steps + k x stage1_until.every)."""
    t = params.shapes.train
    step = stage1_rule.stop_step(rule_checks(train_seen, params), t)
    return step if step <= done else None


def time_step(params: Params, data, lm, device, bf16, steps: int) -> float:
    """Median seconds of a stage-1 step under `params`, measured alone (the sweep itself may run several workers
    at once, so its own timings are not the machine's)."""
    seeds = run_seeds(params.seed, 0)
    connector = new_connector(params, data.meta["output_shape"], lm.width, seeds["init"],
                              **design_inputs(params, lm, CODEBOOK)).to(device)
    vlm = VLM(lm, connector, device, bf16)
    optimizer = torch.optim.AdamW(connector.parameters(), lr=params.shapes.train.lr)
    batches = caption_batches(data, seeds["captions"], params.shapes.train.batch_size)

    return round(timed(lambda: training_step(vlm, next(batches), data.feats, optimizer), steps), 4)


def load_inputs(base: Params, data_dir: str, heldout: bool):
    """(training, seen-pair test and, when asked, held-out-pair test split; device, bf16, language model)."""
    pictures, features = Path(data_dir) / "pictures", Path(data_dir) / "features"
    data = load_split("train", pictures, features, base.vision)
    test = load_split("test_seen", pictures, features, base.vision)
    held = load_split("test_heldout", pictures, features, base.vision) if heldout else None
    return data, test, held, *setup(base)


def seeded_run(params: Params, seed: int, inputs, args) -> dict:
    """One (setting, seed) run from the same global seeds whichever process makes it and whatever it ran before."""
    data, test, heldout, device, bf16, lm = inputs
    torch.manual_seed(0)
    np.random.seed(0)
    return run_one(params, seed, data, test, lm, device, bf16, args.steps, args.every, args.items, heldout,
                   stop=not args.no_stop, train_curve=args.train_curve)


_WORKER: dict = {}  # a worker process's inputs, loaded by its first run of a sweep and kept for its later ones


def worker_run(sweep: str, threads: int, base: Params, name: str, params: Params, seed: int, args) -> tuple:
    """A --jobs worker's run: its share of the threads set before anything loads, then (name, the run)."""
    if not logging.getLogger().handlers:  # a fresh worker process: log as run_cli does
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    torch.set_num_threads(threads)
    if _WORKER.get("sweep") != sweep:
        _WORKER.clear()
        _WORKER.update(sweep=sweep, inputs=load_inputs(base, args.data, args.heldout))
    log.info("setting %r, seed %d (worker %d, %d threads)", name, seed, os.getpid(), threads)
    return name, seeded_run(params, seed, _WORKER["inputs"], args)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.shapes.sweeps.converge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml", help="the params each setting overrides (default params.yaml)")
    ap.add_argument("--data", default=str(DATA), help=f"the study's pictures/ and features/ (default {DATA})")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                    help="replicate indices to train from scratch, each a run of every setting (default 0 1 2)")
    ap.add_argument("--steps", type=int, default=400, help="most stage-1 steps a run gets")
    ap.add_argument("--every", type=int, default=25, help="steps between caption evaluations")
    ap.add_argument("--items", type=int, default=60, help="seen-pair test pictures captioned at each evaluation")
    ap.add_argument("--only", nargs="+", default=None, help="run only these settings of SETTINGS")
    ap.add_argument("--setting", nargs="+", action="append", default=[], metavar=("NAME", "KEY=VALUE"),
                    help="an extra setting: a name, then overrides of keys under shapes: (train.lr=2e-3; repeatable)")
    ap.add_argument("--language", metavar="NAME", default=None,
                    help="the language model of every run (language.name: embedded, a hub id, a directory or a .gguf "
                         "file; default params.yaml's); each setting is saved as '<label>: <setting>'")
    ap.add_argument("--label", default=None, help="the model's name in the table (default: --language's file or "
                                                  "directory name)")
    ap.add_argument("--json", type=Path, default=Path("bench/converge.json"),
                    help="where runs are kept between calls and read by the report (default bench/converge.json)")
    ap.add_argument("--fresh", action="store_true", help="redo runs already in --json")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: torch's choice; with --jobs, every core), split between the jobs")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="runs at once, each in a joblib worker process with 1/N of the threads (default 1: in this "
                         "process, one after another); step counts can differ by thread count as bf16 kernels do")
    ap.add_argument("--heldout", action="store_true",
                    help="also caption the first --items held-out-pair test pictures at every evaluation")
    ap.add_argument("--no-stop", action="store_true", help="train every seed for --steps, past the thresholds")
    ap.add_argument("--train-curve", action="store_true",
                    help="also caption the first --items training pictures at every evaluation (what a rule that "
                         "stops on the run's own training captions would read)")
    ap.add_argument("--time-steps", type=int, default=0, metavar="N",
                    help="only time each setting's step (median of N, this process alone) and record it; run it "
                         "with nothing else on the machine: the table's seconds come from it")
    args = ap.parse_args()
    if args.jobs < 1:
        raise FrozenbridgeError(f"--jobs {args.jobs}: give 1 or more")
    if args.jobs > 1 and args.time_steps:
        raise FrozenbridgeError("--time-steps times each step alone on the machine: run it without --jobs")
    if args.threads and args.jobs == 1:
        torch.set_num_threads(args.threads)
    raw = read_yaml(Path(args.params).read_text())
    load_params(args.params)
    if args.language is not None:
        raw = {**raw, "language": {"name": args.language}}
    settings = {k: v for k, v in SETTINGS.items() if args.only is None or k in args.only}
    for name, *pairs in args.setting:
        settings[name] = dict(parse_override(p) for p in pairs)
    if not settings:
        raise FrozenbridgeError(f"--only {args.only}: no such setting; known: {list(SETTINGS)}")
    if args.language is not None:
        label = args.label or model_label(args.language)
        settings = {f"{label}: {k}": v for k, v in settings.items()}
    checked = {name: apply_overrides(raw, o) for name, o in settings.items()}  # every setting valid before work
    base = next(iter(checked.values()))
    inputs = load_inputs(base, args.data, args.heldout) if args.jobs == 1 else None  # --jobs: each worker's own
    saved = json.loads(args.json.read_text()) if args.json.is_file() and not args.fresh else {"results": {}}
    results = saved["results"]
    if args.time_steps:
        data, _, _, device, bf16, lm = inputs
        for name, params in checked.items():
            if name not in results:
                raise FrozenbridgeError(f"{args.json}: no runs of setting {name!r} to time; run it first")
            results[name]["step_seconds"] = time_step(params, data, lm, device, bf16, args.time_steps)
            log.info("%s: %.3f s a step", name, results[name]["step_seconds"])
            save(args.json, name, results[name], {})
        print(format_table({k: results[k] for k in checked}))
        return
    mode = dict(zip(MODE_KEYS, (args.steps, args.heldout, not args.no_stop, base.language.name, args.train_curve)))
    entries, todo = {}, []
    for name in checked:
        entry = results.get(name)
        made = {**entry, "train_curve": entry.get("train_curve", False)} if entry is not None else None  # older
        if made is None or made["overrides"] != settings[name] or any(made.get(k, v) != v for k, v in mode.items()):
            entry = {"overrides": settings[name], **mode, "runs": []}
        entries[name] = entry
        done = {r["seed"] for r in entry["runs"]}
        todo += [(name, seed) for seed in dict.fromkeys(args.seeds) if seed not in done]

    def record(name: str, run: dict) -> None:
        entry = entries[name]
        entry["runs"].append(run)
        entry["runs"].sort(key=lambda r: r["seed"])
        entry["summary"] = summarize(entry["runs"], args.steps)
        results[name] = entry
        save(args.json, name, entry, {"items": args.items, "every": args.every})

    if args.jobs == 1:
        for name, seed in todo:
            log.info("setting %r, seed %d", name, seed)
            record(name, seeded_run(checked[name], seed, inputs, args))
    elif todo:
        from joblib import Parallel, delayed

        threads = max(1, (args.threads or os.cpu_count() or torch.get_num_threads()) // args.jobs)
        log.info("%d runs, %d at a time, %d threads each", len(todo), args.jobs, threads)
        sweep = uuid.uuid4().hex  # a worker kept from an earlier sweep in this process loads its inputs anew
        finished = Parallel(n_jobs=args.jobs, backend="loky", return_as="generator_unordered")(
            delayed(worker_run)(sweep, threads, base, name, checked[name], seed, args) for name, seed in todo)
        for name, run in finished:  # saved as each run finishes, whatever the order
            record(name, run)
    print(format_table({k: results[k] for k in checked}))


if __name__ == "__main__":
    run_cli(main)
