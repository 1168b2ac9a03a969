"""Backbones load through one code path (embedded name, hub id or local directory) and come back frozen."""

from __future__ import annotations

import logging

import pytest
import torch
from PIL import Image

from frozenbridge.backbones import load_language, load_vision
from frozenbridge.errors import FrozenbridgeError
from frozenbridge.params import LanguageParams, VisionParams

PICS = [Image.new("RGB", (64, 64), c) for c in ("white", "red", "blue")]


@pytest.mark.parametrize("family, features, layer, shape, tokens", [
    ("clip", "patches", None, [4, 4, 32], 16),  # class token dropped
    ("clip", "patches", 1, [4, 4, 32], 16),
    ("clip", "pooled", None, [24], 1),  # the projected image embedding (projection_dim 24)
    ("siglip", "patches", None, [4, 4, 32], 16),
    ("siglip", "pooled", None, [32], 1),
])
def test_hf_vision_feature_shapes(tiny_models, family, features, layer, shape, tokens):
    enc = load_vision(VisionParams(name=str(tiny_models[family]), features=features, layer=layer))
    out = enc.encode(PICS)
    assert enc.output_shape == shape
    assert out.shape == (3, tokens, shape[-1]) and out.dtype == torch.float32
    assert not torch.allclose(out[0], out[1])  # the picture matters
    meta = enc.metadata()
    assert meta["encoder"] == str(tiny_models[family]) and len(meta["revision"]) == 16


def test_clip_pooled_matches_full_clip_image_features(tiny_models):
    from transformers import CLIPModel

    enc = load_vision(VisionParams(name=str(tiny_models["clip"]), features="pooled", layer=None))
    full = CLIPModel.from_pretrained(tiny_models["clip"]).eval()
    pixels = enc.preprocess(PICS)
    with torch.no_grad():
        expected = full.get_image_features(pixel_values=pixels)
    expected = getattr(expected, "pooler_output", expected)
    torch.testing.assert_close(enc.forward(pixels)[:, 0], expected)


def test_vision_is_frozen_and_logged(tiny_models, caplog):
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        enc = load_vision(VisionParams(name=str(tiny_models["siglip"]), layer=None))
    assert not enc.model.training
    assert not any(p.requires_grad for p in enc.model.parameters())
    assert "frozen vision encoder" in caplog.text and "requires_grad=False" in caplog.text


def test_language_model_from_local_dir(tiny_models, caplog):
    with caplog.at_level(logging.INFO, logger="frozenbridge"):
        lm = load_language(LanguageParams(name=str(tiny_models["qwen2"])))
    assert not lm.model.training and not any(p.requires_grad for p in lm.model.parameters())
    assert "frozen language model" in caplog.text
    ids = lm.tokenizer(["Caption: a red square"], return_tensors="pt").input_ids
    logits = lm.forward(lm.embed(ids))
    assert logits.shape == (1, ids.shape[1], len(lm.tokenizer)) and lm.width == 64
    assert lm.tokenizer.eos_token == "<|endoftext|>" and lm.tokenizer.pad_token_id is not None


def test_bad_vision_layer_is_refused(tiny_models):
    with pytest.raises(FrozenbridgeError, match="vision.layer"):
        load_vision(VisionParams(name=str(tiny_models["clip"]), layer=9))
    with pytest.raises(FrozenbridgeError, match="vision.layer must be null"):
        load_vision(VisionParams(name=str(tiny_models["clip"]), features="pooled", layer=1))


def test_unsupported_vision_family(tiny_models):
    with pytest.raises(FrozenbridgeError, match="supported vision families"):
        load_vision(VisionParams(name=str(tiny_models["qwen2"]), layer=None))


@pytest.mark.parametrize("loader, params, key", [
    (load_vision, VisionParams(name="nobody/no-such-encoder", layer=None), "vision.name"),
    (load_language, LanguageParams(name="nobody/no-such-lm"), "language.name"),
])
def test_missing_hub_model_fails_in_one_clear_line(loader, params, key):
    with pytest.raises(FrozenbridgeError) as info:
        loader(params)
    msg = str(info.value)
    assert msg.startswith(f"{key} = '{params.name}'") and "local directory" in msg and "\n" not in msg


def test_missing_local_directory(tmp_path):
    with pytest.raises(FrozenbridgeError, match="no such directory"):
        load_language(LanguageParams(name=str(tmp_path / "nope")))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FrozenbridgeError, match="not a loadable model directory"):
        load_vision(VisionParams(name=str(tmp_path / "empty"), layer=None))
