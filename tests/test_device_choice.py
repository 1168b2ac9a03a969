"""`device: auto` on a machine with several GPUs: the freest GPU no other process holds, held until exit."""

from __future__ import annotations

from types import SimpleNamespace

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


def no_nvml(i):
    raise ModuleNotFoundError("pynvml does not seem to be installed")  # what torch says without nvidia-ml-py


def test_auto_on_a_machine_with_several_gpus_asks_for_free_memory(locks, monkeypatch):
    monkeypatch.delenv(device.DEVICE_ENV, raising=False)
    monkeypatch.setattr(device.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device.torch.cuda, "device_count", lambda: 3)
    monkeypatch.setattr(device.torch.cuda, "device_memory_used", no_nvml)
    monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: ([1, 7, 3][i], 10))
    assert device.pick_device("auto") == device.torch.device("cuda:1")
    assert device.pick_device("cuda:2") == device.torch.device("cuda:2")  # an explicit GPU is never second-guessed


@pytest.fixture
def three_gpus(locks, monkeypatch):
    """A simulated machine with three GPUs, 7, 3 and 5 units free."""
    monkeypatch.setattr(device.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device.torch.cuda, "device_count", lambda: 3)
    monkeypatch.setattr(device.torch.cuda, "device_memory_used", no_nvml)
    monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: ([7, 3, 5][i], 10))
    return locks


def test_free_memory_comes_from_nvml_when_it_answers(monkeypatch):
    """With nvidia-ml-py, free memory is total less NVML's used bytes and no CUDA context is opened (mem_get_info,
    which opens one, is never called); without it, CUDA's reading."""
    monkeypatch.setattr(device.torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(device.torch.cuda, "get_device_properties", lambda i: SimpleNamespace(total_memory=10))
    monkeypatch.setattr(device.torch.cuda, "device_memory_used", lambda i: [6, 1][i])
    monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: pytest.fail("opened a CUDA context"))
    assert device.free_memory() == [4, 9]
    monkeypatch.setattr(device.torch.cuda, "device_memory_used", no_nvml)
    monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: ([2, 3][i], 10))
    assert device.free_memory() == [2, 3]


def test_two_data_parallel_runs_get_disjoint_gpus(three_gpus):
    """Another experiment's process holds the freest GPU; a two-process run takes the other two, one each, and a
    third process finds none of its own: a clear error, never two processes of one run on one GPU."""
    other = device._try_lock(0)
    picked, kept = [], []
    for _ in range(2):  # the run's two processes, each its own process
        kept += device._held.values()
        device._held.clear()
        picked.append(device.gpu_of_its_own(2))
    assert picked == [device.torch.device("cuda", 2), device.torch.device("cuda", 1)]
    kept += device._held.values()
    device._held.clear()
    with pytest.raises(device.FrozenbridgeError, match="processes = 3: every one of the 3 GPU"):
        device.gpu_of_its_own(3)
    for f in [other, *kept]:
        f.close()


def test_a_data_parallel_process_joins_on_its_claimed_gpu(three_gpus, monkeypatch):
    from frozenbridge.bridge import data_parallel

    joined, current = [], []
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(data_parallel.dist, "is_initialized", lambda: False)
    monkeypatch.setattr(data_parallel.dist, "init_process_group", joined.append)
    monkeypatch.setattr(data_parallel.torch.cuda, "set_device", current.append)
    assert data_parallel.init_from_env(True) == device.torch.device("cuda", 0)
    assert joined == ["nccl"] and current == [device.torch.device("cuda", 0)]


def test_more_processes_than_gpus_fail_before_torchrun_starts(three_gpus, monkeypatch):
    from frozenbridge.bridge import data_parallel

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(data_parallel.subprocess, "call", lambda cmd: pytest.fail(f"started {cmd}"))
    with pytest.raises(device.FrozenbridgeError, match="processes = 4 needs a GPU for each process and this "
                                                       "machine has 3"):
        data_parallel.launch(4, "auto")


def test_one_pinned_gpu_for_several_processes_is_refused(three_gpus, monkeypatch):
    """Named in params.yaml or in $FROZENBRIDGE_DEVICE, cuda:N would put every process on one GPU."""
    from frozenbridge.bridge import data_parallel

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv(device.DEVICE_ENV, raising=False)
    monkeypatch.setattr(data_parallel.subprocess, "call", lambda cmd: pytest.fail(f"started {cmd}"))
    with pytest.raises(device.FrozenbridgeError, match=r"params.yaml: device = 'cuda:1' is not allowed with "
                                                       r"processes = 2; expected auto or cuda"):
        data_parallel.launch(2, "cuda:1")
    monkeypatch.setenv(device.DEVICE_ENV, "cuda:2")
    with pytest.raises(device.FrozenbridgeError, match=rf"{device.DEVICE_ENV} = 'cuda:2' is not allowed"):
        data_parallel.launch(2, "auto")
    assert device.gpus_for_processes(2, "cuda") and not device.gpus_for_processes(2, "cpu")


def test_gpus_are_locked_by_uuid_not_by_index(locks, monkeypatch):
    """Two runs that split the GPUs with CUDA_VISIBLE_DEVICES (2,3 and 0,1) both number theirs 0 and 1: locks named by
    the GPU's UUID let the second take its own GPUs instead of finding them held."""
    first, second = ["GPU-c", "GPU-d"], ["GPU-a", "GPU-b"]
    visible = first
    monkeypatch.setattr(device.torch.cuda, "get_device_properties", lambda i: SimpleNamespace(uuid=visible[i]))
    held_by_first = []  # lock files stay open, as in the first run's live processes
    for _ in range(2):
        device._held.clear()
        assert device.claim_gpu([7, 5], share=False) is not None
        held_by_first += device._held.values()
    visible = second
    device._held.clear()
    assert device.claim_gpu([7, 5], share=False) == 0  # its own GPU 0 (GPU-a), free although the other run's 0 is held
    visible = first
    device._held.clear()
    assert device.claim_gpu([7, 5], share=False) is None  # the first run's GPUs are all held


@pytest.fixture
def machine(monkeypatch, locks):
    """A simulated machine: `machine(cuda=..., mps=...)` says which accelerators it has."""
    monkeypatch.delenv(device.DEVICE_ENV, raising=False)

    def have(cuda: int = 0, mps: bool = False):
        monkeypatch.setattr(device.torch.cuda, "is_available", lambda: cuda > 0)
        monkeypatch.setattr(device.torch.cuda, "device_count", lambda: cuda)
        monkeypatch.setattr(device.torch.cuda, "device_memory_used", no_nvml)
        monkeypatch.setattr(device.torch.cuda, "mem_get_info", lambda i: (10 - i, 10))
        monkeypatch.setattr(device.torch.backends.mps, "is_available", lambda: mps)
    return have


@pytest.mark.parametrize("cuda, mps, chosen", [
    (1, True, "cuda"),  # CUDA first, even on a machine that also has MPS
    (2, False, "cuda:0"),  # several GPUs: the freest
    (0, True, "mps"),  # then Apple's GPU
    (0, False, "cpu"),  # then the CPU
])
def test_auto_takes_cuda_then_apples_gpu_then_the_cpu(machine, cuda, mps, chosen):
    machine(cuda=cuda, mps=mps)
    assert device.pick_device("auto") == device.torch.device(chosen)
    assert device.pick_device("cpu") == device.torch.device("cpu")  # a named device is never second-guessed


def test_mps_named_where_there_is_none_is_one_clear_line(machine, monkeypatch):
    machine(cuda=0, mps=False)
    with pytest.raises(device.FrozenbridgeError) as info:
        device.pick_device("mps")
    assert str(info.value).startswith("params.yaml: device = 'mps': Apple's GPU is not available here")
    assert "\n" not in str(info.value)
    monkeypatch.setenv(device.DEVICE_ENV, "mps")
    with pytest.raises(device.FrozenbridgeError, match="FROZENBRIDGE_DEVICE = 'mps'"):
        device.pick_device("auto")
    machine(cuda=0, mps=True)
    assert device.pick_device("mps") == device.torch.device("mps")


def test_data_parallel_processes_are_refused_on_mps(machine):
    machine(cuda=0, mps=True)
    with pytest.raises(device.FrozenbridgeError, match="'mps' is not allowed with shapes.train.processes = 2"):
        device.gpus_for_processes(2, "mps", "shapes.train.processes")


@pytest.fixture
def mac(monkeypatch):
    """Apple's GPU simulated: `mac(macos=14, matmul=None)` sets the macOS major version and what a bf16 matmul on
    the GPU does (None: it runs; an exception: it raises that)."""
    from frozenbridge.core import precision

    def have(macos: int, matmul: Exception | None = None):
        monkeypatch.setattr(precision.torch.backends.mps, "is_macos_or_newer", lambda major, minor: macos >= major)

        def run(where):
            assert where == "mps"
            if matmul is not None:
                raise matmul
        monkeypatch.setattr(precision, "_bf16_matmul", run)
    return have


MPS = device.torch.device("mps")


def test_mps_precision_is_bf16_on_macos_14_when_the_gpu_runs_it(mac):
    from frozenbridge.core.precision import bf16_choice, use_bf16

    mac(macos=14)
    assert bf16_choice("auto", MPS) == (True, "macOS 14 or newer, and this Apple GPU ran a bf16 matmul")
    assert use_bf16("fp32", MPS) is False  # asked for fp32: fp32
    mac(macos=13)
    ok, why = bf16_choice("auto", MPS)
    assert not ok and "from macOS 14 on" in why
    mac(macos=15, matmul=TypeError("MPS BFloat16 is only supported on MacOS 14 or newer"))
    ok, why = bf16_choice("auto", MPS)
    assert not ok and why.startswith("this Apple GPU refused a bf16 matmul (MPS BFloat16 is only")


def test_bf16_asked_for_on_an_mps_that_cannot_is_one_clear_line(mac):
    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.core.precision import bf16_choice

    mac(macos=13)
    with pytest.raises(FrozenbridgeError, match="precision = 'bf16' cannot run on mps: Apple's GPU runs bf16 from"):
        bf16_choice("bf16", MPS)
    mac(macos=14)
    assert bf16_choice("bf16", MPS)[0] is True


def test_the_log_says_the_device_the_precision_and_why(mac, caplog, tiny_models, monkeypatch):
    """The frozen model's set-up line names the precision and the reason auto chose it (on the CPU: this one's)."""
    import logging

    from frozenbridge.core import frozen, precision

    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        frozen.frozen_language(str(tiny_models["qwen2"]), device.torch.device("cpu"), "auto")
    assert ("device cpu, fp32 for the frozen language model (this CPU has no bf16 instructions (neither "
            "AVX512-BF16 nor AMX)") in caplog.text


def _allowed_devices() -> list[str]:
    """The device names pick_device accepts, read from its own refusal (auto, cpu, cuda, cuda:N, mps)."""
    import re

    from frozenbridge.core.errors import FrozenbridgeError

    with pytest.raises(FrozenbridgeError) as refused:
        device.pick_device("tpu")
    listed = re.search(r"expected (.+)$", str(refused.value)).group(1)
    return re.split(r", | or ", listed)


def _help(main, argv: list[str], monkeypatch, capsys) -> str:
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit):
        main()
    return capsys.readouterr().out


def _names_every_device(text: str, allowed: list[str]) -> set[str]:
    """The allowed names missing from `text` (cuda and cuda:N told apart)."""
    import re

    return {name for name in allowed if not re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", text)}


def test_every_page_and_help_lists_the_devices_the_code_accepts(monkeypatch, capsys):
    from pathlib import Path

    from frozenbridge import cli
    from frozenbridge.bench.__main__ import main as bench
    from frozenbridge.tools import forecast

    allowed = _allowed_devices()
    assert set(allowed) == {"auto", "cpu", "cuda", "cuda:N", "mps"}
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text().split("## Where it runs", 1)[1].split("\n## ", 1)[0]
    params = "\n".join(line for line in (root / "params.yaml").read_text().splitlines()[:6] if line.startswith("#"))
    shapes = next(p for p in (root / "docs" / "shapes.md").read_text().split("\n\n") if "Everything runs on" in p)
    texts = {"README.md, where it runs": readme, "params.yaml, device": params, "docs/shapes.md": shapes}
    for name, main, argv in (("frozenbridge caption --help", lambda: cli.main(["caption", "--help"]), ["frozenbridge"]),
                             *((f"bench {b}", lambda b=b: bench([b, "--help"]), ["bench"])
                               for b in ("steps", "gpu", "reference")),
                             ("tools.forecast", forecast.main, ["forecast", "--help"])):
        texts[name] = " ".join(_help(main, argv, monkeypatch, capsys).split())
    assert {name: missing for name, text in texts.items() if (missing := _names_every_device(text, allowed))} == {}
