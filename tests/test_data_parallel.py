"""Data-parallel training: two CPU processes (gloo), each on half of every batch, follow the same loss curve and end
at the same connector weights as one process on the whole batch, with the same seed."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

STEPS, BATCH = 5, 6
CAPTIONS = ["a red square", "a blue circle and a green triangle", "a purple square, a red circle and a blue square",
            "an orange triangle", "a yellow circle and a red square", "a green square, a blue circle, a red "
            "triangle and an orange circle", "a blue triangle", "a red circle and a purple triangle"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(lm_path: str, out: Path, rank: int = 0, world_size: int = 1) -> None:
    """STEPS steps on a fixed stream of batches; rank 0 writes the loss per step and the final weights."""
    import torch.distributed as dist

    from frozenbridge.bridge.connector import MergedPatchMLP
    from frozenbridge.bridge.data_parallel import DataParallel, SummedGradients, broadcast_parameters
    from frozenbridge.bridge.model import VLM
    from frozenbridge.bridge.sequence import Item
    from frozenbridge.bridge.step import train_steps
    from frozenbridge.core.backbones import load_language

    torch.set_num_threads(1)
    cpu = torch.device("cpu")
    lm = load_language(lm_path)
    torch.manual_seed(0)
    feats = torch.randn(len(CAPTIONS), 4, 8)
    connector = MergedPatchMLP([2, 2, 8], lm.width, merge=1)
    vlm = VLM(lm, connector, cpu, False)
    optimizer = torch.optim.AdamW(connector.parameters(), lr=0.01)
    if world_size > 1:
        broadcast_parameters(connector.parameters())
        vlm, optimizer = DataParallel(vlm), SummedGradients(optimizer)

    def batches():
        step = 0
        while True:
            yield [Item((step * BATCH + i) % len(CAPTIONS), "Caption:", CAPTIONS[(step * 3 + i) % len(CAPTIONS)])
                   for i in range(BATCH)]
            step += 1

    losses: list[float] = []
    train_steps(vlm, batches(), feats, optimizer, STEPS, f"rank {rank}",
                after_step=lambda n, loss: losses.append(loss))
    if rank == 0:
        out.write_text(json.dumps({"losses": losses,
                                   "weights": [p.detach().flatten().tolist() for p in connector.parameters()]}))
    if world_size > 1:
        dist.barrier()


def _worker(rank: int, world_size: int, port: int, lm_path: str, out: Path) -> None:
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    try:
        train(lm_path, out, rank, world_size)
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def curves(tiny_models, tmp_path_factory) -> tuple[dict, dict]:
    tmp = tmp_path_factory.mktemp("ddp")
    train(str(tiny_models["qwen2"]), tmp / "one.json")
    mp.spawn(_worker, args=(2, free_port(), str(tiny_models["qwen2"]), tmp / "two.json"), nprocs=2, join=True)
    return json.loads((tmp / "one.json").read_text()), json.loads((tmp / "two.json").read_text())


def test_two_processes_follow_one_processs_loss_curve(curves):
    one, two = curves
    assert len(one["losses"]) == len(two["losses"]) == STEPS
    assert one["losses"][0] > one["losses"][-1]  # it learns
    assert two["losses"] == pytest.approx(one["losses"], abs=1e-5, rel=1e-5)


def test_two_processes_end_at_one_processs_weights(curves):
    one, two = curves
    a = torch.tensor([w for p in one["weights"] for w in p])
    b = torch.tensor([w for p in two["weights"] for w in p])
    assert torch.allclose(a, b, atol=1e-5), float((a - b).abs().max())


def test_without_torchrun_nothing_is_initialised(monkeypatch):
    from frozenbridge.bridge.data_parallel import init_from_env, world

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert init_from_env() is None and world() == (0, 1)


DESIGNS = ("mlp", "cross_attention")  # cross-attention's blocks read each process's share of the pictures


def _shapes_run(out: Path, lm_path: str, rank: int = 0, world_size: int = 1, port: int = 0) -> None:
    """The shapes study's stage 1 and caption_qa_lora (LoRA included) through `shapes.train.train`, for each design
    in DESIGNS (one process group for them all: one spawn, not one a design), into out/<design>/."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parent))
    import torch.distributed as dist
    from test_train import tiny_split

    from frozenbridge.core.backbones import load_language
    from frozenbridge.shapes.params import (ConnectorParams, CrossAttentionKnobs, Params, ShapesParams, Stage1Until,
                                            TrainParams)
    from frozenbridge.shapes.training.run import train as train_run

    torch.set_num_threads(1)
    if world_size > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
    try:
        data = tiny_split()
        for design in DESIGNS:
            lm = load_language(lm_path)  # each design from the same frozen model (LoRA goes into it)
            connector = ConnectorParams(design=design, cross_attention=CrossAttentionKnobs(every=1))
            p = Params(shapes=ShapesParams(connector=connector, train=TrainParams(
                stage1_until=Stage1Until(share=0), batch_size=6, stage1_steps=3, stage2_steps=3, lora_lr=0.01)))
            train_run(p, None, 0, data, lm, torch.device("cpu"), False, out / design / "stage1")
            if world_size > 1:
                dist.barrier()  # rank 0 has written stage 1, which the recipe starts from
            train_run(p, "caption_qa_lora", 0, data, lm, torch.device("cpu"), False, out / design / "lora",
                      stage1_dir=out / design / "stage1")
    finally:
        if world_size > 1:
            dist.destroy_process_group()


def _shapes_worker(rank: int, world_size: int, port: int, lm_path: str, out: Path) -> None:
    _shapes_run(out, lm_path, rank, world_size, port)


def test_the_shapes_training_stage_split_over_two_processes_matches_one(tiny_models, tmp_path):
    """For the MLP and for cross-attention, whose blocks read each process's share of the pictures (and LoRA trains
    beside them): two processes follow one's loss curve and end at its weights."""
    import csv

    from frozenbridge.bridge.saved_run import load_connector

    _shapes_run(tmp_path / "one", str(tiny_models["qwen2"]))
    mp.spawn(_shapes_worker, args=(2, free_port(), str(tiny_models["qwen2"]), tmp_path / "two"), nprocs=2, join=True)
    for design in DESIGNS:
        for run in ("stage1", "lora"):
            curves = []
            for n in ("one", "two"):
                with open(tmp_path / n / design / run / "history.csv") as f:
                    curves.append([float(r["loss"]) for r in csv.DictReader(f)])
            assert len(curves[0]) == len(curves[1]) > 0, design
            assert curves[1] == pytest.approx(curves[0], abs=1e-4), design
            a, b = (load_connector(tmp_path / n / design / run) for n in ("one", "two"))
            for x, y in zip(a.parameters(), b.parameters()):
                assert torch.allclose(x, y, atol=1e-4), design
        assert (tmp_path / "two" / design / "lora" / "lora").is_dir()


def test_a_script_asking_for_two_processes_runs_again_under_torchrun(tmp_path):
    """On CPU cores on any machine: the script passes device cpu as a stage passes params.yaml's, and no process sees
    a GPU (on GPUs each process needs one of its own, so a one-GPU machine refuses two; test_device_choice)."""
    script = tmp_path / "script.py"
    script.write_text("import os, sys\nfrom frozenbridge.bridge.data_parallel import launch\nlaunch(2, 'cpu')\n"
                      "open(os.path.join(sys.argv[1], 'rank' + os.environ['RANK']), 'w')"
                      ".write(os.environ['WORLD_SIZE'])\n")
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env.update(CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("rank*")) == ["rank0", "rank1"]
    assert (tmp_path / "rank1").read_text() == "2"
