"""bf16 and fp32 agree on a fixed batch; the device is chosen from the param, then the environment, then the
hardware."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest
import torch
from test_train import tiny_split

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.core.backbones import load_language
from frozenbridge.core.device import DEVICE_ENV, pick_device
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core import precision
from frozenbridge.core.precision import (compile_cache, compile_choice, compile_layers, cpp_compiler,
                                        prepare_frozen)
from frozenbridge.shapes.training.split_data import question_batches
from frozenbridge.testing.tiny_language import LM_FAMILIES

CPU = torch.device("cpu")
LOSS_RTOL = 0.02  # bf16 keeps 8 bits of mantissa: on this batch the loss moves 0.9% from fp32 (stated bound: 2%)
GRAD_COSINE = 0.98  # and the connector's gradient points the same way


def loss_and_grad(lm, bf16: bool, data, items):
    torch.manual_seed(0)
    connector = MergedPatchMLP([4, 4, 32], lm.width, merge=2)
    loss = VLM(lm, connector, CPU, bf16).loss(items, data.feats)
    loss.backward()
    return loss.item(), torch.cat([p.grad.flatten() for p in connector.parameters()])


def test_bf16_and_fp32_give_the_same_loss_on_a_fixed_batch():
    """The embedded SmolLM2-135M, one fixed batch of 8 questions with 4 image tokens each."""
    lm32 = load_language("smollm2-135m")
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


def test_the_embedded_model_loads_straight_into_bf16_with_the_weights_a_cast_gives():
    """A stage in bf16 loads the embedded SmolLM2 in bf16 (no fp32 copy first): the same weights, bit for bit, as
    loading it in fp32 and casting, which is what the committed runs did."""
    cast = prepare_frozen(load_language("smollm2-135m").model, CPU, bf16=True).state_dict()
    straight = load_language("smollm2-135m", dtype=torch.bfloat16).model.state_dict()
    assert straight.keys() == cast.keys()
    assert all(straight[k].dtype == cast[k].dtype == torch.bfloat16 and torch.equal(straight[k], cast[k])
               for k in cast)


def test_a_model_of_a_directory_loads_in_fp32_whatever_the_run_asks(tiny_models):
    """Any other model is checked in fp32 first (check_causal_lm) and cast by prepare_frozen afterwards."""
    lm = load_language(str(tiny_models["qwen2"]), dtype=torch.bfloat16)
    assert {p.dtype for p in lm.model.parameters()} == {torch.float32}


def test_compiled_layers_give_the_eager_loss_and_gradient(tiny_models, compiles):
    """train.compile: each decoder layer compiled by inductor computes what the eager layers do."""
    eager = load_language(str(tiny_models["qwen2"]))
    compiled = copy.copy(eager)
    compiled.model = copy.deepcopy(eager.model)
    assert compile_layers(compiled.model) == len(compiled.model.get_decoder().layers) > 0
    data = tiny_split()
    items = next(question_batches(data, np.random.SeedSequence(0), 8))
    loss_e, grad_e = loss_and_grad(eager, False, data, items)
    loss_c, grad_c = loss_and_grad(compiled, False, data, items)
    assert loss_c == pytest.approx(loss_e, rel=1e-4)
    assert torch.allclose(grad_c, grad_e, rtol=1e-3, atol=1e-6)


def test_auto_compiles_training_steps_on_a_cpu_with_a_cpp_compiler(monkeypatch):
    """train.compile: auto compiles where the benchmark measured it faster, every training step on a CPU with g++;
    true and false decide alone; without a compiler auto trains eager and says why."""
    monkeypatch.setattr(precision, "cpp_compiler", lambda: "/usr/bin/g++")
    assert compile_choice("auto", CPU) == (
        True, "train.compile: auto compiles the training steps on a CPU with a C++ compiler")
    assert compile_choice("auto", torch.device("cuda"))[0] is False
    assert compile_choice(True, torch.device("cuda"))[0] is True
    assert compile_choice(False, CPU)[0] is False
    monkeypatch.setattr(precision, "cpp_compiler", lambda: None)
    compiled, why = compile_choice("auto", CPU)
    assert not compiled and "no C++ compiler" in why


def test_cpp_compiler_reads_cxx(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    assert cpp_compiler() is None
    monkeypatch.setenv("CXX", "sh")  # any program on PATH stands for one here
    assert cpp_compiler().endswith("/sh")


def test_the_compile_cache_is_inductors_own(monkeypatch, tmp_path):
    """The directory the log names is the one inductor writes to: $TORCHINDUCTOR_CACHE_DIR where set."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    assert compile_cache() == tmp_path / "mine" and (tmp_path / "mine").is_dir()


def test_stage1_compiles_by_default_and_its_rule_decodes_eager(tiny_models, compiles, tmp_path):
    """shapes.train.compile: auto on this CPU (with g++) compiles stage 1 (captions) too; the stop rule's captions
    are decoded eager (the checks it records are the eager run's), and the loss follows the eager run's."""
    import dataclasses

    from test_train import params

    from frozenbridge.shapes.params import Stage1Until
    from frozenbridge.shapes.training.run import train

    data, runs = tiny_split(), {}
    for compile_ in ("auto", False):
        p = params(compile=compile_)
        p = dataclasses.replace(p, shapes=dataclasses.replace(p.shapes, train=dataclasses.replace(
            p.shapes.train, stage1_until=Stage1Until(share=1.0, items=4, every=1, max_steps=4))))
        lm = load_language(str(tiny_models["qwen2"]))
        runs[compile_] = train(p, None, 0, data, lm, CPU, False, tmp_path / str(compile_))
    compiled, eager = runs["auto"], runs[False]
    assert compiled["compiled_layers"] is True and eager["compiled_layers"] is False
    assert [step for step, _ in compiled["stage1_checks"]] == [2, 3, 4]
    assert compiled["stage1_checks"] == eager["stage1_checks"]
    assert compiled["final_loss"] == pytest.approx(eager["final_loss"], rel=1e-3)


@pytest.mark.parametrize("recipe", ["qa", "caption_qa_lora"])
def test_a_question_run_compiles_its_layers_by_default(tiny_models, compiles, tmp_path, caplog, recipe):
    """shapes.train.compile: auto on this CPU (with g++): a question run (qa from scratch, or the LoRA recipe from
    stage 1, its adapter inside the compiled layers) compiles the decoder layers, says so and records it in run.json;
    the text check reads the model eager (the same perplexity before and after, and as the eager run's), and the loss
    follows the eager run's."""
    from test_train import params

    from frozenbridge.shapes.training.run import train

    data = tiny_split()
    stage1 = train(params(compile=False), None, 0, data, load_language(str(tiny_models["qwen2"])), CPU, False,
                   tmp_path / "s1")
    assert stage1["compiled_layers"] is False
    runs = {}
    for compile_ in ("auto", False):
        lm = load_language(str(tiny_models["qwen2"]))
        with caplog.at_level(logging.INFO, logger="frozenbridge.train"):
            caplog.clear()
            runs[compile_] = train(params(compile=compile_), recipe, 0, data, lm, CPU, False,
                                   tmp_path / str(compile_), stage1_dir=tmp_path / "s1")
        assert ("decoder layers compiled" in caplog.text) is (compile_ == "auto")
    compiled, eager = runs["auto"], runs[False]
    assert compiled["compiled_layers"] is True and eager["compiled_layers"] is False
    checks = compiled["language_check"], eager["language_check"]
    assert checks[0]["before"] == checks[1]["before"]  # read eager, whatever train.compile says
    if recipe == "qa":  # no adapter: the language model as it was
        assert checks[0]["after"] == checks[0]["before"]
    assert compiled["final_loss"] == pytest.approx(eager["final_loss"], rel=1e-3)


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
@pytest.mark.parametrize("family", ["qwen2", *LM_FAMILIES])
def test_language_model_families_train_with_lora_and_evaluate(family_lms, tiny_models, tmp_path, caplog, family,
                                                              bf16):
    """A tiny random model of each family through stage 1, the LoRA recipe from it (its packed question rows run
    packed, or unpacked where the model cannot take them), the saved run rebuilt from its directory, and evaluation
    with every condition, in fp32 and in bf16. The families: Qwen2 (RoPE, grouped-query attention, RMSNorm); the
    LayerNorm ones, which under bf16 on CPU used to stop at "mixed dtype (CPU)": GPT-2 (learned absolute
    positions), OPT (learned positions with an offset), GPT-NeoX (partial rotary), Phi; BLOOM (ALiBi, no position
    ids: trains unpacked); GPTBigCode (multi-query, learned absolute); XGLM (sinusoidal positions, embeddings scaled
    by sqrt(width)); Falcon (parallel attention and MLP, multi-query, rotary); Gemma2 (embeddings scaled by
    sqrt(width), soft-capped attention and final logits, a sliding window that binds on every other layer); Qwen3
    (RMSNorm on queries and keys)."""
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.shapes.evaluation.scoring import evaluate_split
    from frozenbridge.shapes.params import EvaluateParams, Params, ShapesParams, Stage1Until, TrainParams
    from frozenbridge.shapes.training.run import train

    path = str(tiny_models["qwen2"] if family == "qwen2" else family_lms / family)
    lm = load_language(path)
    prepare_frozen(lm.model, CPU, bf16)
    frozen = {k: v.clone() for k, v in lm.model.state_dict().items()}
    data, test = tiny_split(), tiny_split(6, seed=1)
    p = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                     batch_size=4, stage1_steps=2, stage2_steps=2)))
    with caplog.at_level(logging.INFO, logger="frozenbridge.model"):
        s1 = train(p, None, 0, data, lm, CPU, bf16, tmp_path / "stage1")
        run = train(p, "caption_qa_lora", 0, data, lm, CPU, bf16, tmp_path / "lora", stage1_dir=tmp_path / "stage1")
    assert np.isfinite(s1["final_loss"]) and np.isfinite(run["final_loss"]) and run["lora_params"] > 0
    packing = [r.getMessage() for r in caplog.records if r.getMessage().startswith("packed question batches")]
    ran = "not with this language model" if family == "bloom" else "once a batch row"  # BLOOM: ALiBi
    assert packing and all(ran in line for line in packing)
    base = {k.replace("base_model.model.", "").replace(".base_layer", ""): v
            for k, v in lm.model.state_dict().items() if "lora_" not in k}
    assert all(torch.equal(base[k], v) for k, v in frozen.items())  # the frozen weights never moved
    saved = load_run(tmp_path / "lora", CPU, bf16)
    assert saved.config["language"]["name"] == path and saved.model.bf16 == bf16
    cfg = EvaluateParams(items=3, batch_size=8, caption_tokens=4, answer_tokens=2)
    scores, predictions = evaluate_split(saved.model, test, test.feats[:1], cfg, family)
    assert set(scores) == {"caption", "count", "binding", "leftmost"}
    assert all(len(predictions[t]) == scores[t]["n"] for t in scores)


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
