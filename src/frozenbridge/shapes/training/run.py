"""One training loop for every recipe: stage 1 on captions, then the recipe's phases.

Seeds: a run's randomness derives from (seed, replicate) only, never from the recipe, so within a replicate
every recipe starts from the same random connector and draws the same questions in the same order (paired runs).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import logging
import time
from pathlib import Path

import numpy as np
import torch

from frozenbridge.bridge.data_parallel import DataParallel, SummedGradients, broadcast_parameters, world
from frozenbridge.bridge.design import Design, design_class
from frozenbridge.bridge.inside import InsideLog
from frozenbridge.bridge.lora import attach_lora, lora_state, set_lora_state, trainable
from frozenbridge.bridge.model import VLM, decoder_layers
from frozenbridge.bridge.perplexity import language_state
from frozenbridge.bridge.saved_run import encoder_config, load_connector, save_run
from frozenbridge.bridge.step import train_steps
from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.backbones.hub import file_digest
from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.checkpoint import Checkpoints, fingerprint
from frozenbridge.core.precision import compile_cache, compile_choice, compile_layers, describe
from frozenbridge.core.seeds import spawn
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.training.codebook import read_centroids
from frozenbridge.shapes.training.recipes import RECIPES, STAGE1_PHASE, Phase
from frozenbridge.shapes.training.split_data import SplitData, caption_batches, question_batches
from frozenbridge.shapes.training.stage1_rule import Stage1Rule, rule_steps

log = logging.getLogger("frozenbridge.train")


def run_seeds(seed: int, replicate: int) -> dict[str, np.random.SeedSequence]:
    """The run's streams, from (seed, replicate) alone: every recipe of a replicate draws the same ones."""
    return spawn(("init", "captions", "questions", "mix_captions"), seed, replicate)


def new_connector(params: Params, feature_shape: list[int], width: int, seed: np.random.SeedSequence,
                  layers: int | None = None, centroids: torch.Tensor | None = None) -> Design:
    """The design params.yaml names, its weights drawn from the run's init stream (`layers`: the language model's
    decoder layers, for cross-attention; `centroids`: the codebook stage's, for codebook)."""
    torch.manual_seed(int(seed.generate_state(1)[0]))
    c = params.shapes.connector
    return design_class(c.design).from_params(c.knobs(), feature_shape, width, layers=layers, centroids=centroids)


def design_inputs(params: Params, lm: LanguageModel, codebook_dir: Path | None) -> dict:
    """What a design takes beyond the features' shape and the model's width: the language model's decoder layers
    (cross-attention) and the codebook's centroids (codebook: stage shapes_codebook's, in `codebook_dir`)."""
    centroids = None if params.shapes.connector.design != "codebook" else read_centroids(params, codebook_dir)
    return {"layers": len(decoder_layers(lm.model)), "centroids": centroids}


def run_fingerprint(params: Params, run: str, device: torch.device, bf16: bool, data_meta: dict,
                    stage1_digest: str | None, compiled: bool = False) -> str:
    """What the run's numbers depend on (compiled layers round otherwise than eager ones); the checkpoint interval
    and the evaluation settings are left out."""
    p = dataclasses.asdict(params)
    p["shapes"].pop("evaluate")
    p["shapes"]["train"].pop("checkpoint_every")
    p["shapes"]["train"].pop("processes")
    _, size = world()  # under torchrun every process resumes the same checkpoint
    where = str(device) if size == 1 else f"{device.type} x{size}"
    return fingerprint({"params": p, "run": run, "device": where, "bf16": bf16, "features": data_meta,
                        "stage1": stage1_digest, "compiled": compiled})


def add_lora(lm: LanguageModel, params: Params, seed: np.random.SeedSequence):
    t = params.shapes.train
    return attach_lora(lm, t.lora_rank, t.lora_alpha, int(seed.generate_state(2)[1]))


def batches_for(phase: Phase, data: SplitData, seeds: dict, params: Params):
    """Endless batches for a phase; the question stream of a replicate is the same whatever the recipe."""
    size = params.shapes.train.batch_size
    if phase.data == "captions":
        return caption_batches(data, seeds["captions"], size)
    questions = question_batches(data, seeds["questions"], size)
    if phase.data == "questions":
        return questions
    captions = caption_batches(data, seeds["mix_captions"], params.shapes.train.mix_captions)
    return (q + c for q, c in zip(questions, captions))  # "mix"


def train_phase(vlm: VLM, data: SplitData, phase: Phase, steps: int, batches, optimizer, history: list,
                run: str, done: int = 0, after_step=None, schedule: tuple[str, float] = ("constant", 0.0),
                schedule_steps: int | None = None, more: tuple[str, int] | None = None,
                least: int | None = None) -> None:
    """Steps `done`..`steps` of one phase (`done` > 0 when resuming), each recorded in `history` as (global step,
    phase, loss); `after_step(n)` runs after step n and stops the phase early when it returns True. The learning
    rate follows `schedule` over `schedule_steps` (default: the phase's steps); `more` and `least` (the fewest
    steps, where `after_step` may stop the phase sooner than `steps`) go to the forecast line (bridge.step)."""
    start = len(history) - done  # global step count before this phase

    def record(step: int, loss: float) -> bool:
        history.append((start + step, phase.data, loss))
        return after_step is not None and bool(after_step(step))
    train_steps(vlm, batches, data.feats, optimizer, steps, run, f"{run} {phase.data}", done, schedule,
                schedule_steps, start, record, more, least)


def study_steps(params: Params) -> int:
    """The training steps of every shapes run params.yaml asks for: stage 1 and each recipe, per replicate."""
    t = params.shapes.train
    per_replicate = STAGE1_PHASE.n_steps(t) + sum(p.n_steps(t) for r in params.shapes.recipes
                                                  for p in RECIPES[r].phases)
    return per_replicate * len(params.replicates)


def run_phases(vlm: VLM, data: SplitData, phases: tuple[Phase, ...], seeds: dict, params: Params, history: list,
               run: str, checkpoints: Checkpoints, rule: Stage1Rule | None = None,
               inside: InsideLog | None = None) -> object | None:
    """Train `phases` in turn; stage 1 (`rule` given) stops where the rule says (training.stage1_rule); `inside`
    looks inside the design as it trains (bridge.inside)."""
    resume = checkpoints.load()
    if resume is not None:
        vlm.connector.load_state_dict(resume["connector"])
        history[:] = [tuple(h) for h in resume["history"]]
        if rule is not None:  # the checks read before the checkpoint, for run.json
            rule.checks[:] = [tuple(c) for c in resume.get("extra", {}).get("stage1_checks", [])]
        if inside is not None:
            inside.entries[:] = resume.get("extra", {}).get("inside", [])
    if inside is not None:
        inside(len(history))
    peft_model = None
    for i, phase in enumerate(phases):
        groups = vlm.connector.param_groups(params.shapes.train.lr)
        if phase.lora:
            peft_model = add_lora(vlm.lm, params, seeds["init"])
            lora = trainable(vlm.lm)
            groups.append({"params": lora, "lr": params.shapes.train.lora_lr})
            log.info("%s: LoRA rank %d on every linear layer: %s trainable parameters", run,
                     params.shapes.train.lora_rank, f"{sum(p.numel() for p in lora):,}")
        optimizer = torch.optim.AdamW(groups)
        if world()[1] > 1:  # data-parallel: the same start everywhere, gradients summed before each step
            broadcast_parameters(p for g in groups for p in g["params"])
            optimizer = SummedGradients(optimizer)
        done = 0
        if resume is not None and i < resume["phase"]:
            continue  # finished before the checkpoint; its effect is in the restored weights
        if resume is not None and i == resume["phase"]:
            if resume["lora"] is not None:
                set_lora_state(peft_model, resume["lora"])
            optimizer.load_state_dict(resume["optimizer"])
            done = resume["step"]
        batches = batches_for(phase, data, seeds, params)
        for _ in range(done):  # the streams depend on the seed only: skipping replays them exactly
            next(batches)

        def after_step(step: int, i=i, optimizer=optimizer) -> bool:
            if inside is not None:
                inside(len(history))
            if rule is not None and rule(step):  # every process reads the same captions and stops alike
                return True  # before a checkpoint: one written here would be resumed past the check that passed
            if world()[0] == 0 and checkpoints.due(len(history)):  # one process writes
                extra = {**({"stage1_checks": rule.checks} if rule is not None else {}),
                         **({"inside": inside.entries} if inside is not None and inside.entries else {})}
                checkpoints.save(i, step, vlm.connector, optimizer, lora_state(peft_model), history,
                                 extra=extra or None)
            return False
        steps = rule_steps(params.shapes.train) if rule is not None else phase.n_steps(params.shapes.train)
        train_phase(vlm, data, phase, steps, batches, optimizer, history, run, done, after_step,
                    phase.schedule(params.shapes.train), schedule_steps=phase.n_steps(params.shapes.train),
                    more=("every shapes training run in params.yaml", study_steps(params)),
                    least=phase.n_steps(params.shapes.train) if rule is not None else None)
    return peft_model


def write_run(out: Path, connector: Design, lm: LanguageModel, data_meta: dict, history: list, info: dict,
              peft_model=None, params: Params | None = None) -> None:
    """The saved run (connector, LoRA adapter, config.json) plus the shapes study's history.csv and run.json."""
    t = params.shapes.train
    lora = {"rank": t.lora_rank, "alpha": t.lora_alpha} if peft_model is not None else None
    with atomic_path(out) as tmp:
        tmp.mkdir()
        save_run(tmp, connector, encoder_config(data_meta), lm, peft_model, lora)
        with open(tmp / "history.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "phase", "loss"])
            w.writerows((s, p, f"{loss:.6f}") for s, p, loss in history)
        (tmp / "run.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")


def train(params: Params, recipe: str | None, replicate: int, data: SplitData, lm: LanguageModel,
          device: torch.device, bf16: bool, out: Path, stage1_dir: Path | None = None,
          checkpoint_dir: Path | None = None, codebook_dir: Path | None = None) -> dict:
    """Train stage 1 (recipe None) or a recipe's run and write it to `out`; returns the run's info, which
    records the language model's weights digest and passage perplexity before and after training (the text check
    reads them: the model the run trained with, in the process that trained it).

    `codebook_dir`: stage shapes_codebook's output, which the codebook design reads its centroids from.
    With `checkpoint_dir`, state is saved there every train.checkpoint_every steps and a matching checkpoint
    found there at the start is resumed from.
    """
    run = f"{recipe or 'stage1'}/{replicate}"
    seeds = run_seeds(params.seed, replicate)
    shape = data.meta["output_shape"]
    history: list = []
    if recipe is None or not RECIPES[recipe].from_stage1:
        connector = new_connector(params, shape, lm.width, seeds["init"], **design_inputs(params, lm, codebook_dir))
        phases = (STAGE1_PHASE,) if recipe is None else RECIPES[recipe].phases
    else:
        connector = load_connector(stage1_dir)
        with open(Path(stage1_dir) / "history.csv") as f:
            history = [(int(r["step"]), r["phase"], float(r["loss"])) for r in csv.DictReader(f)]
        phases = RECIPES[recipe].phases
    log.info("%s: %s", run, connector.describe())
    stage1_digest = None if recipe is None or not RECIPES[recipe].from_stage1 else \
        file_digest(Path(stage1_dir) / "connector.pt")  # what the run starts from, for the checkpoint
    language_before = language_state(lm, device, bf16)
    compiled, why = compile_choice(params.shapes.train.compile, device)
    checkpoints = Checkpoints(checkpoint_dir, params.shapes.train.checkpoint_every,
                              run_fingerprint(params, run, device, bf16, data.meta, stage1_digest, compiled), run)
    if compiled:
        log.info("%s: %s: %d decoder layers compiled (the first step compiles them, or loads them from %s)", run,
                 why, compile_layers(lm.model), compile_cache())
    vlm = VLM(lm, connector.to(device), device, bf16)
    if world()[1] > 1:
        vlm = DataParallel(vlm)
    start = time.perf_counter()
    rule = Stage1Rule(vlm, data, params.shapes.train, params.shapes.evaluate, run) if recipe is None else None
    before = len(history)
    inside = InsideLog(connector, data.feats, device)
    peft_model = run_phases(vlm, data, phases, seeds, params, history, run, checkpoints, rule, inside)
    steps = len(history) - before
    if steps:
        log.info("%s: %d steps in %.1f s, %.2f s a step (%s)", run, steps, time.perf_counter() - start,
                 (time.perf_counter() - start) / steps, describe(bf16))
    info = {"run": run, "recipe": recipe or "stage1", "replicate": replicate, "seed": params.seed,
            "connector_params": connector.n_params, "image_tokens": connector.n_out,
            "lora_params": sum(p.numel() for p in lm.model.parameters() if p.requires_grad) if peft_model else 0,
            "steps": len(history), "final_loss": history[-1][2] if history else None, "compiled_layers": compiled,
            "device": str(device), "precision": describe(bf16),
            **({"stage1_checks": rule.checks} if rule is not None else {}),
            **({"inside": inside.entries} if inside.entries else {}),
            "encoder": data.meta["encoder"], "encoder_revision": data.meta["revision"],
            "language": lm.name, "language_revision": lm.revision,
            "language_check": {"before": language_before, "after": language_state(lm, device, bf16)}}
    if world()[0] == 0:  # data-parallel: every process holds the same weights; one writes them
        write_run(out, connector.cpu(), lm, data.meta, history, info, peft_model, params)
        checkpoints.clear()
    return info
