"""`device: auto` on a machine with several GPUs: the freest GPU no other process holds, held until exit."""

from __future__ import annotations

import pytest

from frozenbridge.core import device


@pytest.fixture
def locks(tmp_path, monkeypatch):
    monkeypatch.setattr(device, "LOCK_DIR", tmp_path)
    monkeypatch.setattr(device, "_held", {})
    yield tmp_path
    for f in device._held.values():
        f.close()


def test_the_freest_gpu_is_taken_and_kept(locks):
    assert device.claim_gpu([10, 30, 20]) == 1
    assert device.claim_gpu([10, 30, 20]) == 1  # the same process asks again: the GPU it already holds


def test_workers_starting_together_spread_over_the_gpus(locks):
    """Four workers see the same free memory; each takes a different GPU, freest first."""
    picked, kept = [], []
    for _ in range(4):
        kept += device._held.values()  # the earlier workers keep their locks open...
        device._held.clear()  # ...and a new process holds nothing of its own
        picked.append(device.claim_gpu([50, 80, 80, 20]))
        held = device._try_lock(picked[-1])
        assert held is None  # that GPU is now held by the worker that took it
    assert picked == [1, 2, 0, 3]
    for f in kept:
        f.close()


def test_with_every_gpu_held_a_worker_shares_the_freest(locks):
    others = [device._try_lock(i) for i in range(2)]  # another process holds both
    assert all(others)
    assert device.claim_gpu([5, 9]) == 1
    for f in others:
        f.close()
    assert device.claim_gpu([5, 9]) == 1 and 1 in device._held  # released: now it is taken and held


def test_auto_on_a_machine_with_several_gpus_asks_for_free_memory(locks, monkeypatch):
    monkeypatch.delenv(device.DEVICE_ENV, raising=False)
    monkeypatch.setattr(device.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device.torch.cuda, "device_count", lambda: 3)
    monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: ([1, 7, 3][i], 10))
    assert device.pick_device("auto") == device.torch.device("cuda:1")
    assert device.pick_device("cuda:2") == device.torch.device("cuda:2")  # an explicit GPU is never second-guessed
