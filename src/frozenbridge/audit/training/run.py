"""One replicate of the audit's training: the MLP connector from a seeded start, stage 1 on the training captions when
the folder has any, then stage 2 on the training questions; both backbones stay frozen.

Its seed streams are the shapes study's for the same `seed` and replicate (the same path, core.seeds), and its
batches are drawn as the study draws them, so an audit of the study's own pictures starts from the study's connector
and sees the study's batches in the study's order: replicate r of the audit pairs with replicate r of the study, and
where the study's stop rule ends stage 1 at `stage1_steps` the two train the same run.

Why stage 1 when there are captions: in the shapes study, binding a color to a shape held up on combinations never
seen in training only when the connector had first learned to describe pictures; a run from questions alone looked
as good on familiar combinations. The page says which way this run went.

Writes `out`: model/ (a saved run that `frozenbridge ask` reads), history.csv and run.json, atomically.
"""

from __future__ import annotations

import csv
import logging
import time
from pathlib import Path

import numpy as np
import torch

from frozenbridge.audit.data.features import AuditFeatures, load_features
from frozenbridge.audit.data.folder import AuditFolder
from frozenbridge.audit.params import Params
from frozenbridge.audit.training.batches import caption_batches, question_batches
from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.saved_run import encoder_config, save_run
from frozenbridge.bridge.step import train_steps
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones import LanguageModel
from frozenbridge.core.device import pick_device
from frozenbridge.core.frozen import frozen_language
from frozenbridge.core.precision import compile_choice, compile_layers, describe
from frozenbridge.core.seeds import spawn

log = logging.getLogger("frozenbridge.audit")
def run_seeds(seed: int, replicate: int) -> dict[str, np.random.SeedSequence]:
    """The replicate's streams: the shapes study's path (seed, replicate), its first three streams by name."""
    return spawn(("init", "captions", "questions"), seed, replicate)


def new_connector(params: Params, feats: AuditFeatures, width: int, seed: np.random.SeedSequence) -> MergedPatchMLP:
    torch.manual_seed(int(seed.generate_state(1)[0]))
    c = params.audit.connector
    return MergedPatchMLP(feats.meta["output_shape"], width, merge=c.merge, hidden=c.hidden, order=c.order,
                          positions=c.positions, key="audit.connector")


def train_audit(params: Params, folder: AuditFolder, feats: AuditFeatures, lm: LanguageModel, device: torch.device,
                bf16: bool, out: Path, replicate: int = 0) -> dict:
    """Train replicate `replicate` and write it to `out`; returns run.json's contents."""
    a, t = params.audit, params.audit.train
    seeds = run_seeds(params.seed, replicate)
    connector = new_connector(params, feats, lm.width, seeds["init"])
    log.info("audit replicate %d: %s", replicate, connector.describe())
    compiled, why = compile_choice(t.compile, device)
    if compiled:
        log.info("audit: %s: %d decoder layers compiled", why, compile_layers(lm.model))
    vlm = VLM(lm, connector.to(device), device, bf16)
    history: list[tuple[int, str, float]] = []
    phases = {}
    start = time.perf_counter()
    for name, steps, batches, schedule in (
            ("stage1", t.stage1_steps if folder.has_captions else 0,
             lambda: caption_batches(folder.train, a.prompts.caption, t.batch_size, seeds["captions"]),
             (t.stage1_schedule, t.stage1_warmup)),
            ("stage2", t.stage2_steps if folder.train.has_questions else 0,
             lambda: question_batches(folder.train, a.question_prompt, t.batch_size, seeds["questions"]),
             (t.stage2_schedule, t.stage2_warmup))):
        if not steps:
            phases[name] = None
            continue
        optimizer = torch.optim.AdamW(connector.param_groups(t.lr))
        first = len(history)

        def record(step: int, loss: float, name=name, first=first) -> None:
            history.append((first + step, name, loss))
        train_steps(vlm, batches(), feats.train, optimizer, steps, f"audit {name}, replicate {replicate}",
                    schedule=schedule, first_step=first, after_step=record)
        phases[name] = {"steps": steps, "final_loss": round(history[-1][2], 5)}
    seconds = time.perf_counter() - start
    log.info("audit: %d steps in %.1f s (%s)", len(history), seconds, describe(bf16))
    info = {"stage1": phases["stage1"], "stage2": phases["stage2"],
            "connector_params": connector.n_params, "image_tokens": connector.n_out, "device": str(device),
            "precision": describe(bf16), "compiled_layers": compiled, "seed": params.seed, "replicate": replicate,
            "encoder": feats.meta["encoder"], "language": lm.name, "language_revision": lm.revision}
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        (tmp / "model").mkdir()
        save_run(tmp / "model", connector.cpu(), encoder_config(feats.meta), lm)
        with open(tmp / "history.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "phase", "loss"])
            w.writerows((s, p, f"{loss:.6f}") for s, p, loss in history)
        write_json(tmp / "run.json", info)
    return info


def train(params: Params, folder: AuditFolder, features: Path, out: Path, replicate: int = 0) -> dict:
    """The features checked against the folder, then the frozen language model, then replicate `replicate`'s run
    (the audit_train stage)."""
    feats = load_features(features, folder, params)  # checked before the model loads
    device = pick_device(params.device)
    lm, bf16 = frozen_language(params.language.name, device, params.audit.train.precision)
    return train_audit(params, folder, feats, lm, device, bf16, out, replicate)
