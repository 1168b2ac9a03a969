"""One sweep run: stage 1 of one design at one setting of its grid, on one replicate, with its learning curve.

The run is the pipeline's stage 1 (the same connector draw, caption order, schedule, compile choice and precision
as `shapes_stage1` of that replicate, with the setting's keys over params.yaml), but it does not stop by the stage-1
rule: every `plan.every` steps it captions the rule's own training pictures (`shapes.train.stage1_until.items`, 60)
greedily and keeps a point (step, percent exact, loss), and it stops at the plan's cap or as soon as the curve is flat
(curves.stop_early). Beside the curve it keeps what the design does inside (bridge.inside, at the same steps), its
step time with the machine's load average beside it (work other than the run's own shows as load above
its threads), its size, and the machine and precision it ran on, so a row can be paired only with an MLP made alike.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from frozenbridge.bridge.inside import InsideLog
from frozenbridge.bridge.model import VLM
from frozenbridge.core.backbones.language import LanguageModel
from frozenbridge.core.precision import compile_choice, compile_layers, describe
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.sweeps.converge_settings import apply_overrides
from frozenbridge.shapes.training.codebook import write_codebook
from frozenbridge.shapes.training.recipes import STAGE1_PHASE
from frozenbridge.shapes.training.run import design_inputs, new_connector, run_seeds, train_phase
from frozenbridge.shapes.training.split_data import SplitData, caption_batches
from frozenbridge.shapes.training.stage1_rule import caption_accuracy
from frozenbridge.comparison.sweep.curves import stop_reason
from frozenbridge.comparison.sweep.plan import Plan, Setting, plan_digest

log = logging.getLogger("frozenbridge.sweep")


@dataclass
class Inputs:
    """What every run of a sweep shares: the training split, and the frozen language model on its device."""
    data: SplitData
    lm: LanguageModel
    device: torch.device
    bf16: bool
    machine: dict


def setting_params(raw: dict, design: str, setting: Setting) -> Params:
    """params.yaml (the mapping `raw`) with the design chosen and the setting's keys over it, checked like the file."""
    return apply_overrides(raw, {"connector.design": design, **setting.as_dict()})


def run_setting(raw: dict, design: str, setting: Setting, plan: Plan, inputs: Inputs, replicate: int = 0) -> dict:
    """Train the setting and return its row (see the module's docstring)."""
    params = setting_params(raw, design, setting)
    data, lm, device = inputs.data, inputs.lm, inputs.device
    t = params.shapes.train
    seeds = run_seeds(params.seed, replicate)
    with tempfile.TemporaryDirectory() as tmp:  # the codebook design's centroids, fitted as shapes_codebook would
        codebook = Path(tmp) / "codebook"
        write_codebook(params, data if design == "codebook" else None, codebook)
        connector = new_connector(params, data.meta["output_shape"], lm.width, seeds["init"],
                                  **design_inputs(params, lm, codebook)).to(device)
    compiled, _ = compile_choice(t.compile, device)
    if compiled and not getattr(lm.model, "_frozenbridge_compiled", False):
        compile_layers(lm.model)  # once a process: the layers stay compiled for every later run
        lm.model._frozenbridge_compiled = True
    vlm = VLM(lm, connector, device, inputs.bf16)
    optimizer = torch.optim.AdamW(connector.param_groups(t.lr))
    batches = caption_batches(data, seeds["captions"], t.batch_size)
    history: list = []
    curve: list[list] = []
    inside = InsideLog(connector, data.feats, device, every=plan.every)
    clock = {"train": 0.0, "start": time.perf_counter()}
    loads: list[float] = []  # the machine's 1-minute load average at each curve point: other work shows above threads

    def after_step(step: int) -> bool:
        inside(step)
        if step % plan.every:
            return False
        clock["train"] += time.perf_counter() - clock["start"]
        loads.append(round(os.getloadavg()[0], 2))
        connector.eval()
        with torch.compiler.set_stance("force_eager"):  # decode as evaluation does
            exact = caption_accuracy(vlm, data, t.stage1_until.items, params.shapes.evaluate)
        connector.train()
        curve.append([step, round(exact, 2), round(history[-1][2], 4)])
        log.info("%s %s: step %d, loss %.3f, %.1f%% of its first %d training captions exact", design, setting.name,
                 step, history[-1][2], exact, t.stage1_until.items)
        clock["start"] = time.perf_counter()
        return stop_reason(curve, plan) == "flat"

    inside(0)
    train_phase(vlm, data, STAGE1_PHASE, plan.cap, batches, optimizer, history, f"{design} {setting.name}",
                after_step=after_step, schedule=STAGE1_PHASE.schedule(t), schedule_steps=t.stage1_steps)
    return {"design": design, "setting": setting.name, "values": setting.as_dict(), "plan": plan_digest(plan),
            "replicate": replicate, "curve": curve, "stopped": stop_reason(curve, plan) or "cap",
            "steps": len(history), "step_seconds": round(clock["train"] / max(1, len(history)), 4),
            "load_average": loads, "threads": torch.get_num_threads(),
            "inside": inside.entries, "connector_params": connector.n_params, "image_tokens": connector.n_out,
            "device": str(device), "precision": describe(inputs.bf16), "compiled_layers": compiled,
            "machine": inputs.machine, "language": lm.name}
