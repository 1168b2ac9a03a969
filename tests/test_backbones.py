"""Backbones load through one code path (embedded name, hub id or local directory) and come back frozen."""

from __future__ import annotations

import logging

import pytest
import torch
from PIL import Image

from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.errors import FrozenbridgeError

PICS = [Image.new("RGB", (64, 64), c) for c in ("white", "red", "blue")]


@pytest.mark.parametrize("family, features, layer, shape, tokens", [
    ("clip", "patches", None, [4, 4, 32], 16),  # class token dropped
    ("clip", "patches", 1, [4, 4, 32], 16),
    ("clip", "pooled", None, [24], 1),  # the projected image embedding (projection_dim 24)
    ("siglip", "patches", None, [4, 4, 32], 16),
    ("siglip", "pooled", None, [32], 1),
])
def test_hf_vision_feature_shapes(tiny_models, family, features, layer, shape, tokens):
    enc = load_vision(name=str(tiny_models[family]), features=features, layer=layer)
    out = enc.encode(PICS)
    assert enc.output_shape == shape
    assert out.shape == (3, tokens, shape[-1]) and out.dtype == torch.float32
    assert not torch.allclose(out[0], out[1])  # the picture matters
    meta = enc.metadata()
    assert meta["encoder"] == str(tiny_models[family]) and len(meta["revision"]) == 16


def test_clip_pooled_matches_full_clip_image_features(tiny_models):
    from transformers import CLIPModel

    enc = load_vision(name=str(tiny_models["clip"]), features="pooled", layer=None)
    full = CLIPModel.from_pretrained(tiny_models["clip"]).eval()
    pixels = enc.preprocess(PICS)
    with torch.no_grad():
        expected = full.get_image_features(pixel_values=pixels)
    expected = getattr(expected, "pooler_output", expected)
    torch.testing.assert_close(enc.forward(pixels)[:, 0], expected)


def test_vision_is_frozen_and_logged(tiny_models, caplog):
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        enc = load_vision(name=str(tiny_models["siglip"]), layer=None)
    assert not enc.model.training
    assert not any(p.requires_grad for p in enc.model.parameters())
    assert "frozen vision encoder" in caplog.text and "requires_grad=False" in caplog.text


def test_language_model_from_local_dir(tiny_models, caplog):
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        lm = load_language(str(tiny_models["qwen2"]))
    assert not lm.model.training and not any(p.requires_grad for p in lm.model.parameters())
    assert "frozen language model" in caplog.text
    ids = lm.tokenizer(["Caption: a red square"], return_tensors="pt").input_ids
    logits = lm.forward(lm.embed(ids))
    assert logits.shape == (1, ids.shape[1], len(lm.tokenizer)) and lm.width == 64
    assert lm.tokenizer.eos_token == "<|endoftext|>" and lm.tokenizer.pad_token_id is not None


def test_bad_vision_layer_is_refused(tiny_models):
    with pytest.raises(FrozenbridgeError, match="vision.layer"):
        load_vision(name=str(tiny_models["clip"]), layer=9)
    with pytest.raises(FrozenbridgeError, match="vision.layer must be null"):
        load_vision(name=str(tiny_models["clip"]), features="pooled", layer=1)


def test_unsupported_vision_family(tiny_models):
    with pytest.raises(FrozenbridgeError, match="is a .qwen2. model that takes input_ids, not pictures"):
        load_vision(name=str(tiny_models["qwen2"]), layer=None)


@pytest.mark.parametrize("loader, params, key", [
    (load_vision, "nobody/no-such-encoder", "vision.name"),
    (load_language, "nobody/no-such-lm", "language.name"),
])
def test_missing_hub_model_fails_in_one_clear_line(loader, params, key):
    with pytest.raises(FrozenbridgeError) as info:
        loader(params)
    msg = str(info.value)
    assert msg.startswith(f"{key} = '{params}'") and "local directory" in msg and "\n" not in msg


def test_missing_local_directory(tmp_path):
    with pytest.raises(FrozenbridgeError, match="no such directory"):
        load_language(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FrozenbridgeError, match="not a loadable model directory"):
        load_vision(name=str(tmp_path / "empty"), layer=None)


@pytest.fixture(scope="module")
def vision_families(tmp_path_factory):
    from frozenbridge.testing.tiny_vision import VISION_FAMILIES

    root = tmp_path_factory.mktemp("vision-families")
    for family in ("vit", "dinov2", "dinov2_with_registers"):
        VISION_FAMILIES[family](root / family)
    return root


@pytest.mark.parametrize("family, prepended", [("vit", 1), ("dinov2", 1), ("dinov2_with_registers", 5)])
def test_vit_and_dinov2_patch_tokens_without_class_or_register_tokens(vision_families, family, prepended):
    """Any transformers vision model with patch tokens encodes: the tokens it prepends (class, registers) are
    dropped and the grid comes from its processed picture over its patch size (32 px / 8 = 4 x 4)."""
    from PIL import Image

    enc = load_vision(str(vision_families / family), "patches", None)
    assert enc.grid == (4, 4) and enc.output_shape == [4, 4, 32] and enc.image_size == 32
    pics = [Image.new("RGB", (50, 40), "red"), Image.new("RGB", (32, 32), "blue")]
    pixels = enc.preprocess(pics)
    full = enc.model(pixel_values=pixels).last_hidden_state
    assert full.shape[1] == 16 + prepended
    assert torch.equal(enc.encode(pics), full[:, prepended:].float())
    middle = load_vision(str(vision_families / family), "patches", 1)
    hidden = enc.model(pixel_values=pixels, output_hidden_states=True).hidden_states[1]
    assert torch.equal(middle.encode(pics), hidden[:, prepended:].float())
    pooled = load_vision(str(vision_families / family), "pooled", None)
    assert pooled.output_shape == [32] and torch.equal(
        pooled.encode(pics)[:, 0], enc.model(pixel_values=pixels).pooler_output.float())


def _not_causal_lm(path, family: str) -> None:
    """A tiny T5 (encoder-decoder) or BERT (bidirectional, though transformers loads it as a causal-LM head)."""
    import transformers

    from frozenbridge.testing.tiny_language import build_tokenizer

    vocab = len(build_tokenizer(path))
    torch.manual_seed(0)
    if family == "t5":
        config = transformers.T5Config(vocab_size=vocab, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2)
        transformers.T5ForConditionalGeneration(config).save_pretrained(path)
    else:
        config = transformers.BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
        transformers.BertForMaskedLM(config).save_pretrained(path)


@pytest.mark.parametrize("family, why", [("t5", "is an encoder-decoder, not a causal language model"),
                                         ("bert", "lets a position see later tokens: it is not causal")],
                         ids=["t5", "bert"])
def test_a_model_that_is_not_a_causal_lm_is_refused_in_one_line(tmp_path, family, why):
    path = tmp_path / family
    _not_causal_lm(path, family)
    with pytest.raises(FrozenbridgeError) as info:
        load_language(str(path))
    msg = str(info.value)
    assert msg.startswith(f"language.name = {str(path)!r}: a {family} model {why}; allowed: ") and "\n" not in msg
    assert "smollm2-135m" in msg and "AutoModelForCausalLM" in msg


def test_logits_the_training_head_does_not_reproduce_are_refused(tmp_path, monkeypatch):
    """Gemma2 soft-caps its final logits: a training head without the cap would train on other logits than the
    model's, so the load-time check refuses it (and passes with the cap, as every family test loads it)."""
    from frozenbridge.core.backbones import language
    from frozenbridge.testing.tiny_language import build_family_lm

    build_family_lm(tmp_path / "gemma2", "gemma2")
    assert load_language(str(tmp_path / "gemma2")).model.config.final_logit_softcapping == 5.0
    monkeypatch.setattr(language, "output_logits", lambda model, hidden: model.get_output_embeddings()(hidden))
    with pytest.raises(FrozenbridgeError, match="a gemma2 model changes its logits past its output layer"):
        load_language(str(tmp_path / "gemma2"))
