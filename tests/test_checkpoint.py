"""Checkpoint and resume: a run stopped after a checkpoint and restarted ends exactly where an uninterrupted run
ends."""

from __future__ import annotations

import logging

import pytest
import torch
from test_train import tiny_split

from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.saved_run import load_connector
from frozenbridge.core.backbones import load_language
from frozenbridge.core.checkpoint import Checkpoints
from frozenbridge.shapes.params import (ConnectorParams, CrossAttentionKnobs, EvaluateParams, Params, ResamplerKnobs,
                                        ShapesParams, Stage1Until, TrainParams)
from frozenbridge.shapes.training.run import train

CPU = torch.device("cpu")


class Killed(Exception):
    pass


# stage 1's rule on: checks after steps 4, 6 and 8, which a random-weight model fails, so stage 1 runs 8 steps
RULE = Stage1Until(share=0.5, items=3, every=2, max_steps=8)


def params(every: int, rule: bool = False, design: str = "mlp") -> Params:
    knobs = {"cross_attention": CrossAttentionKnobs(every=1), "resampler": ResamplerKnobs(latents=3)}
    return Params(shapes=ShapesParams(connector=ConnectorParams(design=design, **knobs),
                                      train=TrainParams(stage1_until=RULE if rule else Stage1Until(share=0),
                                                        batch_size=4, stage1_steps=4, stage2_steps=4, mix_captions=2,
                                                        checkpoint_every=every),
                                      evaluate=EvaluateParams(batch_size=8, caption_tokens=6)))


def fresh_lm(tiny_models):
    return load_language(str(tiny_models["qwen2"]))


def run(tiny_models, tmp, recipe, every, ckpt=None, stage1=None, rule=False, design="mlp"):
    return train(params(every, rule, design), recipe, 0, tiny_split(), fresh_lm(tiny_models), CPU, False,
                 tmp / (recipe or "stage1"), stage1_dir=stage1, checkpoint_dir=ckpt)


def same_run(a, b) -> None:
    assert (a / "history.csv").read_bytes() == (b / "history.csv").read_bytes()
    assert (a / "run.json").read_bytes() == (b / "run.json").read_bytes()
    ca, cb = load_connector(a).state_dict(), load_connector(b).state_dict()
    assert all(torch.equal(ca[k], cb[k]) for k in ca)
    if (a / "lora").exists():
        adapter = "lora/adapter_model.safetensors"
        assert (a / adapter).read_bytes() == (b / adapter).read_bytes()


@pytest.mark.parametrize("recipe,kill_at,rule,design", [
    (None, 2, False, "mlp"), ("caption_qa_lora", 6, False, "mlp"), ("qa", 4, False, "mlp"), (None, 6, True, "mlp"),
    ("caption_qa_lora", 6, False, "cross_attention"), ("qa", 4, False, "resampler")],
    ids=["stage1", "lora", "qa", "stage1-rule", "lora-cross_attention", "qa-resampler"])
def test_killed_run_resumes_to_the_same_result(tiny_models, tmp_path, monkeypatch, caplog, recipe, kill_at, rule,
                                               design):
    """Stage 1 with its rule is killed after its second check: the resumed run keeps the checks read before the
    checkpoint (run.json is byte-identical) and stops where the whole run stopped. Other designs resume alike
    (cross-attention's blocks and gates with a LoRA adapter, a resampler's latents)."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    stage1 = None
    if recipe and recipe != "qa":
        run(tiny_models, whole, None, 0, design=design)
        stage1 = whole / "stage1"
    run(tiny_models, whole, recipe, 0, stage1=stage1, rule=rule, design=design)

    save = Checkpoints.save

    def save_then_die(self, phase, step, *args, **kwargs):
        save(self, phase, step, *args, **kwargs)
        if len(args[-1]) == kill_at:  # history length: the global step
            raise Killed

    monkeypatch.setattr(Checkpoints, "save", save_then_die)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Killed):
        run(tiny_models, parts, recipe, 2, ckpt=ckpt, stage1=stage1, rule=rule, design=design)
    assert (ckpt / "checkpoint.pt").is_file() and not (parts / (recipe or "stage1")).exists()
    monkeypatch.setattr(Checkpoints, "save", save)
    steps = []
    loss = VLM.loss
    monkeypatch.setattr(VLM, "loss", lambda self, *a: steps.append(1) or loss(self, *a))
    with caplog.at_level(logging.INFO, logger="frozenbridge.checkpoint"):
        run(tiny_models, parts, recipe, 2, ckpt=ckpt, stage1=stage1, rule=rule, design=design)
    assert f"at step {kill_at}" in caplog.text and "resuming from" in caplog.text
    last = 8 if rule or recipe is not None else 4  # global step numbers: recipes after stage 1 continue its count
    assert len(steps) == last - kill_at, "the restart trains only the steps after the checkpoint"
    assert not ckpt.exists(), "the checkpoint is removed once the run is written"
    same_run(whole / (recipe or "stage1"), parts / (recipe or "stage1"))


def test_checkpoint_from_other_params_is_ignored(tiny_models, tmp_path, caplog):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    torch.save({"fingerprint": "someone else", "phase": 0, "step": 2, "history": []}, ckpt / "checkpoint.pt")
    run(tiny_models, tmp_path / "a", None, 2, ckpt=ckpt)
    run(tiny_models, tmp_path / "b", None, 0)
    assert "made with other params" in caplog.text
    same_run(tmp_path / "a/stage1", tmp_path / "b/stage1")


def test_torn_checkpoint_is_ignored(tiny_models, tmp_path, caplog):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "checkpoint.pt").write_bytes(b"PK\x03\x04 not a whole file")
    run(tiny_models, tmp_path / "a", None, 2, ckpt=ckpt)
    assert "unreadable checkpoint" in caplog.text and (tmp_path / "a/stage1/run.json").is_file()
