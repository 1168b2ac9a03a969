"""bf16 and fp32 agree on a fixed batch; the device is chosen from the param, then the environment, then the
hardware."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from frozenbridge.backbones import load_language
from frozenbridge.connector import Connector
from frozenbridge.errors import FrozenbridgeError
from frozenbridge.params import LanguageParams
from frozenbridge.precision import DEVICE_ENV, compile_layers, pick_device, prepare_frozen
from frozenbridge.rundata import question_batches
from frozenbridge.vlm import VLM

from test_train import tiny_split

CPU = torch.device("cpu")
LOSS_RTOL = 0.02  # bf16 keeps 8 bits of mantissa: on this batch the loss moves 0.9% from fp32 (stated bound: 2%)
GRAD_COSINE = 0.98  # and the connector's gradient points the same way


def loss_and_grad(lm, bf16: bool, data, items):
    torch.manual_seed(0)
    connector = Connector([4, 4, 32], lm.width, merge=2)
    loss = VLM(lm, connector, CPU, bf16).loss(items, data.feats)
    loss.backward()
    return loss.item(), torch.cat([p.grad.flatten() for p in connector.parameters()])


def test_bf16_and_fp32_give_the_same_loss_on_a_fixed_batch():
    """The embedded SmolLM2-135M, one fixed batch of 8 questions with 4 image tokens each."""
    lm32 = load_language(LanguageParams())
    lm16 = copy.copy(lm32)
    lm16.model = prepare_frozen(copy.deepcopy(lm32.model), CPU, bf16=True)
    assert next(lm16.model.parameters()).dtype == torch.bfloat16
    data = tiny_split()
    data.feats = data.feats.float() * 3
    items = next(question_batches(data, np.random.SeedSequence(0), 8))
    loss32, grad32 = loss_and_grad(lm32, False, data, items)
    loss16, grad16 = loss_and_grad(lm16, True, data, items)
    assert loss16 == pytest.approx(loss32, rel=LOSS_RTOL)
    assert torch.nn.functional.cosine_similarity(grad16, grad32, dim=0) > GRAD_COSINE
    assert grad16.dtype == torch.float32  # the connector stays fp32


def test_compiled_layers_give_the_eager_loss_and_gradient(tiny_models):
    """train.compile: each decoder layer compiled by inductor computes what the eager layers do."""
    eager = load_language(LanguageParams(name=str(tiny_models["qwen2"])))
    compiled = copy.copy(eager)
    compiled.model = copy.deepcopy(eager.model)
    assert compile_layers(compiled.model) == len(compiled.model.get_decoder().layers) > 0
    data = tiny_split()
    items = next(question_batches(data, np.random.SeedSequence(0), 8))
    loss_e, grad_e = loss_and_grad(eager, False, data, items)
    loss_c, grad_c = loss_and_grad(compiled, False, data, items)
    assert loss_c == pytest.approx(loss_e, rel=1e-4)
    assert torch.allclose(grad_c, grad_e, rtol=1e-3, atol=1e-6)


@pytest.fixture(scope="module")
def layernorm_lms(tmp_path_factory):
    from frozenbridge.tiny import LAYERNORM_FAMILIES, build_layernorm_lm

    root = tmp_path_factory.mktemp("layernorm_lms")
    for family in LAYERNORM_FAMILIES:
        build_layernorm_lm(root / family, family)
    return root


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
@pytest.mark.parametrize("family", ["gpt2", "opt", "gpt_neox", "phi"])
def test_layernorm_language_models_train_and_decode(layernorm_lms, family, bf16):
    """LayerNorm families under bf16 on CPU used to stop at "mixed dtype (CPU)"; their norms now stay fp32."""
    lm = load_language(LanguageParams(name=str(layernorm_lms / family)))
    prepare_frozen(lm.model, CPU, bf16)
    data = tiny_split()
    items = next(question_batches(data, np.random.SeedSequence(0), 4))
    loss, grad = loss_and_grad(lm, bf16, data, items)
    assert np.isfinite(loss) and grad.abs().sum() > 0 and grad.dtype == torch.float32
    torch.manual_seed(0)
    vlm = VLM(lm, Connector([4, 4, 32], lm.width, merge=2), CPU, bf16)
    assert len(vlm.generate(items, data.feats, 3)) == len(items)


def test_device_param_then_env_then_hardware(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert pick_device("cpu") == CPU
    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert pick_device("auto") == CPU
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(FrozenbridgeError, match="FROZENBRIDGE_DEVICE = 'tpu' is not allowed"):
        pick_device("auto")
    assert pick_device("cpu") == CPU  # the param wins over the environment


def test_unavailable_cuda_is_a_clear_error(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    wanted = "cuda:99" if torch.cuda.is_available() else "cuda"
    with pytest.raises(FrozenbridgeError, match=f"device = '{wanted}'"):
        pick_device(wanted)
