"""One training loop for every recipe: stage 1 on captions, then the recipe's phases.

Seeds: a run's randomness derives from (seed, replicate) only, never from the recipe, so within a replicate
every recipe starts from the same random connector and draws the same questions in the same order (paired runs).
"""

from __future__ import annotations

import csv
import json
import math
import logging
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from .atomic import atomic_path
from .backbones.hub import file_digest
from .checkpoint import Checkpoints, fingerprint
from .backbones.language import LanguageModel
from .connector import Connector
from .errors import FrozenbridgeError
from .params import Params
from .precision import describe
from .recipes import RECIPES, STAGE1, Phase
from .rundata import SplitData, caption_batches, question_batches
from .vlm import VLM

log = logging.getLogger("frozenbridge.train")


def run_seeds(seed: int, replicate: int) -> dict[str, np.random.SeedSequence]:
    names = ("init", "captions", "questions", "mix_captions")
    return dict(zip(names, np.random.SeedSequence([seed, replicate]).spawn(len(names))))


def new_connector(params: Params, feature_shape: list[int], width: int, seed: np.random.SeedSequence) -> Connector:
    torch.manual_seed(int(seed.generate_state(1)[0]))
    c = params.connector
    return Connector(feature_shape, width, c.merge, c.hidden, c.prefix_tokens, c.order, c.norm, c.positions,
                     c.init_scale)


def save_connector(connector: Connector, path: Path, feature_shape: list[int]) -> None:
    config = {"feature_shape": feature_shape, "out_dim": connector.out_dim, "merge": connector.k,
              "hidden": connector.mlp[0].out_features, "prefix_tokens": connector.n_out if connector.pooled else 1, "order": connector.order,
              "norm": connector.norm is not None, "positions": connector.positions is not None}
    torch.save({"config": config, "state_dict": connector.state_dict()}, path)


def load_connector(run_dir: Path) -> Connector:
    path = Path(run_dir) / "connector.pt"
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: no trained connector here; run `dvc repro` to train it")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        connector = Connector(**saved["config"])
        connector.load_state_dict(saved["state_dict"])
    except (RuntimeError, KeyError, EOFError) as err:
        raise FrozenbridgeError(f"{path}: unreadable connector ({err}); rerun its train stage") from None
    return connector


def add_lora(lm: LanguageModel, params: Params, seed: np.random.SeedSequence):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(int(seed.generate_state(2)[1]))
    config = LoraConfig(r=params.train.lora_rank, lora_alpha=params.train.lora_alpha, lora_dropout=0.0,
                        target_modules="all-linear")
    peft_model = get_peft_model(lm.model, config)  # LoRA layers are injected into lm.model in place
    lm.model.eval()
    return peft_model


def load_lora(lm: LanguageModel, run_dir: Path) -> bool:
    """Attach the run's LoRA adapter to the language model, if it has one."""
    adapter = Path(run_dir) / "lora"
    if not adapter.is_dir():
        return False
    from peft import PeftModel

    PeftModel.from_pretrained(lm.model, adapter)  # injects the adapter into lm.model in place
    lm.model.eval()
    return True


def batches_for(phase: Phase, data: SplitData, seeds: dict, params: Params):
    """Endless batches for a phase; the question stream of a replicate is the same whatever the recipe."""
    size = params.train.batch_size
    if phase.data == "captions":
        return caption_batches(data, seeds["captions"], size)
    questions = question_batches(data, seeds["questions"], size)
    if phase.data == "questions":
        return questions
    captions = caption_batches(data, seeds["mix_captions"], params.train.mix_captions)
    return (q + c for q, c in zip(questions, captions))  # "mix"


def lr_factor(step: int, steps: int, schedule: str, warmup: float) -> float:
    """The learning rate of step `step` (0-based) of a phase of `steps`, as a fraction of train.lr: a linear
    warmup over the first `warmup` of the phase, then constant or a cosine decay to a tenth."""
    warm = int(round(warmup * steps))
    if step < warm:
        return (step + 1) / (warm + 1)
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warm) / max(1, steps - warm))  # past the phase's end: stays at a tenth
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def train_phase(vlm: VLM, data: SplitData, phase: Phase, steps: int, batches, optimizer, history: list,
                run: str, done: int = 0, after_step=None, schedule: tuple[str, float] = ("constant", 0.0),
                schedule_steps: int | None = None) -> None:
    """Steps `done`..`steps` of one phase (`done` > 0 when resuming); `after_step(n)` runs after step n and
    stops the phase early when it returns True. The learning rate follows `schedule` over `schedule_steps`
    (default: the phase's steps)."""
    start = len(history) - done  # global step count before this phase
    for group in optimizer.param_groups:
        group.setdefault("base_lr", group["lr"])
    for step in tqdm(range(done, steps), desc=f"{run} {phase.data}", unit="step", initial=done, total=steps):
        for group in optimizer.param_groups:
            group["lr"] = group["base_lr"] * lr_factor(step, schedule_steps or steps, *schedule)
        loss = vlm.loss(next(batches), data.feats)
        if not torch.isfinite(loss):
            raise FrozenbridgeError(f"{run}: loss is {loss.item()} at step {start + step + 1}; stopped, no metrics "
                                    "written (lower train.lr or check the features)")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        history.append((start + step + 1, phase.data, float(loss.item())))
        if after_step is not None and after_step(step + 1):
            return


def lora_state(peft_model) -> dict | None:
    from peft import get_peft_model_state_dict

    return None if peft_model is None else get_peft_model_state_dict(peft_model)


def run_phases(vlm: VLM, data: SplitData, phases: tuple[Phase, ...], seeds: dict, params: Params, history: list,
               run: str, checkpoints: Checkpoints) -> object | None:
    resume = checkpoints.load()
    if resume is not None:
        vlm.connector.load_state_dict(resume["connector"])
        history[:] = [tuple(h) for h in resume["history"]]
    peft_model = None
    for i, phase in enumerate(phases):
        groups = [{"params": list(vlm.connector.parameters()), "lr": params.train.lr}]
        if phase.lora:
            peft_model = add_lora(vlm.lm, params, seeds["init"])
            lora = [p for p in vlm.lm.model.parameters() if p.requires_grad]
            groups.append({"params": lora, "lr": params.train.lora_lr})
            log.info("%s: LoRA rank %d on every linear layer: %s trainable parameters", run, params.train.lora_rank,
                     f"{sum(p.numel() for p in lora):,}")
        optimizer = torch.optim.AdamW(groups)
        done = 0
        if resume is not None and i < resume["phase"]:
            continue  # finished before the checkpoint; its effect is in the restored weights
        if resume is not None and i == resume["phase"]:
            if resume["lora"] is not None:
                from peft import set_peft_model_state_dict

                set_peft_model_state_dict(peft_model, resume["lora"])
            optimizer.load_state_dict(resume["optimizer"])
            done = resume["step"]
        batches = batches_for(phase, data, seeds, params)
        for _ in range(done):  # the streams depend on the seed only: skipping replays them exactly
            next(batches)

        def after_step(step: int, i=i, optimizer=optimizer) -> None:
            if checkpoints.due(len(history)):
                checkpoints.save(i, step, vlm.connector, optimizer, lora_state(peft_model), history)
        train_phase(vlm, data, phase, phase.n_steps(params.train), batches, optimizer, history, run, done, after_step,
                    phase.schedule(params.train))
    return peft_model


def write_run(out: Path, connector: Connector, feature_shape: list[int], history: list, info: dict,
              peft_model=None) -> None:
    with atomic_path(out) as tmp:
        tmp.mkdir()
        save_connector(connector, tmp / "connector.pt", feature_shape)
        if peft_model is not None:
            peft_model.save_pretrained(tmp / "lora")
        with open(tmp / "history.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "phase", "loss"])
            w.writerows((s, p, f"{loss:.6f}") for s, p, loss in history)
        (tmp / "run.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")


def train(params: Params, recipe: str | None, replicate: int, data: SplitData, lm: LanguageModel,
          device: torch.device, bf16: bool, out: Path, stage1_dir: Path | None = None,
          checkpoint_dir: Path | None = None) -> dict:
    """Train stage 1 (recipe None) or a recipe's run and write it to `out`; returns the run's info.

    With `checkpoint_dir`, state is saved there every train.checkpoint_every steps and a matching checkpoint
    found there at the start is resumed from.
    """
    run = f"{recipe or 'stage1'}/{replicate}"
    seeds = run_seeds(params.seed, replicate)
    shape = data.meta["output_shape"]
    history: list = []
    if recipe is None or not RECIPES[recipe].from_stage1:
        connector = new_connector(params, shape, lm.width, seeds["init"])
        phases = (STAGE1,) if recipe is None else RECIPES[recipe].phases
    else:
        connector = load_connector(stage1_dir)
        with open(Path(stage1_dir) / "history.csv") as f:
            history = [(int(r["step"]), r["phase"], float(r["loss"])) for r in csv.DictReader(f)]
        phases = RECIPES[recipe].phases
    log.info("%s: %s", run, connector.describe())
    stage1_digest = None if recipe is None or not RECIPES[recipe].from_stage1 else \
        file_digest(Path(stage1_dir) / "connector.pt")
    checkpoints = Checkpoints(checkpoint_dir, params.train.checkpoint_every,
                              fingerprint(params, run, device, bf16, data.meta, stage1_digest), run)
    vlm = VLM(lm, connector.to(device), device, bf16)
    start = time.perf_counter()
    peft_model = run_phases(vlm, data, phases, seeds, params, history, run, checkpoints)
    steps = sum(p.n_steps(params.train) for p in phases)
    if steps:
        log.info("%s: %d steps in %.1f s, %.2f s a step (%s)", run, steps, time.perf_counter() - start,
                 (time.perf_counter() - start) / steps, describe(bf16))
    info = {"run": run, "recipe": recipe or "stage1", "replicate": replicate, "seed": params.seed,
            "connector_params": connector.n_params, "image_tokens": connector.n_out,
            "lora_params": sum(p.numel() for p in lm.model.parameters() if p.requires_grad) if peft_model else 0,
            "steps": len(history), "final_loss": history[-1][2] if history else None,
            "encoder": data.meta["encoder"], "encoder_revision": data.meta["revision"],
            "language": lm.name, "language_revision": lm.revision}
    write_run(out, connector.cpu(), shape, history, info, peft_model)
    checkpoints.clear()
    return info
