"""Vision models whose grid is read from their output: feature maps (ResNet, RegNet, ConvNeXt V1/V2, MobileNetV2,
EfficientNet), a (batch, width, H, W) map read row by row as an H x W grid, which need not be square; token models
whose stages downsample past the patch grid (Swin, with its own reshaped maps; LeViT, on squares); or the model's
own pooled vector. Through the feature cache, training (stage 1 and the LoRA recipe), the saved run and evaluation,
in fp32 and in bf16."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import check_features, decode_png, encode_images, load_feature_tensor
from frozenbridge.core.precision import prepare_frozen
from frozenbridge.shapes.data.draw import blank
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.shapes.params import DataParams, SplitSizes
from frozenbridge.shapes.training.split_data import SplitData

CPU = torch.device("cpu")
FAMILIES = ("resnet", "regnet", "convnext", "convnextv2", "mobilenet_v2")  # feature maps
UNLISTED = ("efficientnet", "swin", "levit")  # families a list of supported ones once refused
SIZE = 64  # the shapes pictures' side


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Each family's tiny model, a ResNet and a ConvNeXt whose processor makes 32 x 24 pictures (4 x 3 maps), and a
    Swin on such pictures (stages of 8 x 6, 4 x 3, 2 x 2 tokens)."""
    from frozenbridge.testing.tiny_vision import VISION_FAMILIES, build_convnext, build_resnet, build_swin

    root = tmp_path_factory.mktemp("vision-models")
    for family in (*FAMILIES, *UNLISTED):
        VISION_FAMILIES[family](root / family)
    build_resnet(root / "resnet_4x3", size=(32, 24))
    build_convnext(root / "convnext_4x3", size=(32, 24))
    build_swin(root / "swin_4x3", size=(32, 24))
    return root


def pictures(n: int = 3, seed: int = 0) -> list[Image.Image]:
    """Noise pictures of different sides and aspects (the processor resizes them)."""
    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in [(50, 40), (32, 32),
                                                                                            (40, 64)][:n]]


def flat(x: torch.Tensor) -> torch.Tensor:
    """(B, C, H, W) -> (B, H*W, C), row by row."""
    return x.flatten(2).transpose(1, 2)


@pytest.mark.parametrize("family", [*FAMILIES, "resnet_4x3", "convnext_4x3"])
def test_patches_and_pooled_are_the_models_own_outputs(models, family):
    name = str(models / family)
    enc = load_vision(name, "patches", None)
    pics = pictures()
    pixels = enc.preprocess(pics)
    with torch.no_grad():
        out = enc.model(pixel_values=pixels, output_hidden_states=True)
    last = out.last_hidden_state
    assert last.dim() == 4
    assert enc.grid == tuple(last.shape[-2:]) and enc.output_shape == [*last.shape[-2:], last.shape[1]]
    patches = enc.encode(pics)
    assert torch.equal(patches, flat(last).float())
    assert not torch.equal(patches[0], patches[1])  # the picture matters
    meta = enc.metadata()
    assert meta["grid"] == list(enc.grid) and meta["width"] == last.shape[1] and meta["features"] == "patches"
    assert meta["layer"] is None and meta["output_shape"] == enc.output_shape and len(meta["revision"]) == 16

    middle = load_vision(name, "patches", 1)
    hidden = out.hidden_states[1]
    assert middle.grid == tuple(hidden.shape[-2:]) and middle.width == hidden.shape[1]
    assert torch.equal(middle.encode(pics), flat(hidden).float())
    assert middle.metadata()["layer"] == 1

    pooled = load_vision(name, "pooled", None)
    expected = {"resnet": 4, "regnet": 4}.get(family.split("_4x3")[0], 2)  # ResNet and RegNet pool to (B, C, 1, 1)
    assert out.pooler_output.dim() == expected
    assert pooled.grid is None and pooled.output_shape == [last.shape[1]]
    assert torch.equal(pooled.encode(pics), out.pooler_output.flatten(1)[:, None, :].float())


@pytest.mark.parametrize("family", ["resnet_4x3", "convnext_4x3"])
def test_the_grid_is_read_from_the_map_and_need_not_be_square(models, family):
    """32 x 24 pictures make a 4 x 3 map (stride 8); token r * 3 + c is the map's column at row r, column c."""
    enc = load_vision(str(models / family), "patches", None)
    pics = pictures()
    pixels = enc.preprocess(pics)
    assert tuple(pixels.shape[-2:]) == (32, 24)
    assert enc.grid == (4, 3) and enc.output_shape == [4, 3, 32] and enc.metadata()["grid"] == [4, 3]
    tokens = enc.encode(pics)
    with torch.no_grad():
        fmap = enc.model(pixel_values=pixels).last_hidden_state
    assert tokens.shape == (3, 12, 32)
    for r in range(4):
        for c in range(3):
            assert torch.equal(tokens[:, r * 3 + c], fmap[:, :, r, c])
    assert load_vision(str(models / family), "patches", 0).grid == (8, 6)  # the stem's map: stride 4


@pytest.mark.parametrize("family", [*FAMILIES, *UNLISTED])
def test_a_bad_layer_fails_in_one_line_naming_what_is_allowed(models, family):
    name = str(models / family)
    enc = load_vision(name, "patches", None)
    with torch.no_grad():
        count = len(enc.model(pixel_values=enc.preprocess(pictures(1)), output_hidden_states=True).hidden_states)
    load_vision(name, "patches", count - 1)  # the last valid index loads
    for layer in (count, -1):
        with pytest.raises(FrozenbridgeError) as info:
            load_vision(name, "patches", layer)
        msg = str(info.value)
        assert msg.startswith(f"params.yaml: vision.layer = {layer} is not allowed")
        assert f"hidden-state index 0..{count - 1}" in msg and "\n" not in msg
    with pytest.raises(FrozenbridgeError, match="vision.layer must be null with vision.features = 'pooled'"):
        load_vision(name, "pooled", 1)


def test_a_language_model_is_refused_in_one_line_saying_it_takes_no_pictures(tiny_models):
    name = str(tiny_models["qwen2"])
    with pytest.raises(FrozenbridgeError) as info:
        load_vision(name, layer=None)
    msg = str(info.value)
    assert msg.startswith(f"vision.name = {name!r} is a 'qwen2' model that takes input_ids, not pictures "
                          "(pixel_values); allowed: a transformers model that takes pixel_values") and "\n" not in msg
    assert "feature map (batch, width, H, W)" in msg and "clip, siglip" in msg and "efficientnet-lite0" in msg


def test_tokens_on_no_grid_are_refused_in_one_line_naming_their_shape(tmp_path):
    """ViT-MAE keeps a random quarter of its 16 patches: a class token and 4 patches are no grid of the picture's
    4 x 4 patches, nor a square."""
    import transformers

    torch.manual_seed(0)
    transformers.ViTMAEModel(transformers.ViTMAEConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                                       num_attention_heads=2, image_size=32, patch_size=8)
                             ).save_pretrained(tmp_path)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(tmp_path)
    with pytest.raises(FrozenbridgeError) as info:
        load_vision(str(tmp_path), "patches", None)
    msg = str(info.value)
    assert msg.startswith(f"vision.name = {str(tmp_path)!r} is a 'vit_mae' model whose last_hidden_state has shape "
                          "(1, 5, 32), which lies on no grid; allowed: ") and "\n" not in msg


def own_grid(out, layer: int | None) -> tuple[tuple[int, int], torch.Tensor]:
    """The grid the model's own output shows for `layer`, and its tokens: a map's sides, else the sides of its
    reshaped stage map (Swin's), else a square (LeViT's tokens, none prepended)."""
    hidden = out.last_hidden_state if layer is None else out.hidden_states[layer]
    if hidden.dim() == 4:
        return tuple(hidden.shape[-2:]), flat(hidden)
    if getattr(out, "reshaped_hidden_states", None) is not None:
        return tuple(out.reshaped_hidden_states[-1 if layer is None else layer].shape[-2:]), hidden
    side = math.isqrt(hidden.shape[1])
    assert side * side == hidden.shape[1]
    return (side, side), hidden


# the last grid and hidden state 1's: EfficientNet's head is 32x down (64 px), Swin's and LeViT's last stages are
# 2 x 2 tokens where the picture over the patch size is 8 x 8; Swin's middle stage on 32 x 24 pictures is 4 x 3
GRIDS = {"efficientnet": ((2, 2), (32, 32)), "swin": ((2, 2), (4, 4)), "levit": ((2, 2), (4, 4)),
         "swin_4x3": ((2, 2), (4, 3))}


@pytest.mark.parametrize("family", GRIDS)
def test_unlisted_families_read_the_grid_and_tokens_of_their_own_output(models, family):
    name = str(models / family)
    pics = pictures()
    enc = load_vision(name, "patches", None)
    pixels = enc.preprocess(pics)
    with torch.no_grad():
        out = enc.model(pixel_values=pixels, output_hidden_states=True)
    grids = {}
    for layer in (None, *range(len(out.hidden_states))):  # every layer the model returns
        enc = load_vision(name, "patches", layer)
        grid, tokens = own_grid(out, layer)
        assert enc.grid == grid and enc.output_shape == [*grid, tokens.shape[-1]]
        assert torch.equal(enc.encode(pics), tokens.float())
        grids[layer] = grid
    assert (grids[None], grids[1]) == GRIDS[family]
    if family.startswith("swin"):  # tokens, but not on the picture's patch grid
        patch = enc.model.config.patch_size
        assert out.last_hidden_state.dim() == 3
        assert grids[None] != (pixels.shape[-2] // patch, pixels.shape[-1] // patch)
    pooled = load_vision(name, "pooled", None)
    assert pooled.grid is None and pooled.output_shape == [out.pooler_output.shape[1]]
    assert torch.equal(pooled.encode(pics), out.pooler_output.flatten(1)[:, None, :].float())


def shapes_batches(table, batch: int = 4):
    pngs = table.column("png").to_pylist()
    for i in range(0, len(pngs), batch):
        yield np.arange(i, min(i + batch, len(pngs))), [decode_png(b) for b in pngs[i:i + batch]]


def encoded_split(enc, path, n: int, seed: int, dtype: str = "float16") -> SplitData:
    """Shapes pictures encoded by `enc` into the feature cache and read back as the training split is."""
    table = generate_split("train", n, DataParams(image_size=SIZE, sizes=SplitSizes(train=n)),
                           split_seeds(seed)["train"])
    meta = encode_images(enc, shapes_batches(table), n, path, dtype, {"split": "train"}, "test")
    ids, feats, read = load_feature_tensor(path)
    check_features(read, path, enc.name, enc.features, enc.layer, "features")
    assert ids.tolist() == list(range(n)) and read == meta
    return SplitData(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                     table.column("shapes").to_pylist(), feats, read)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_the_feature_cache_round_trips_a_non_square_grid(models, tmp_path, dtype):
    enc = load_vision(str(models / "resnet_4x3"), "patches", None)
    data = encoded_split(enc, tmp_path / "f.parquet", 5, 0, dtype)
    assert data.meta["grid"] == [4, 3] and data.meta["output_shape"] == [4, 3, 32] and data.meta["tokens"] == 12
    assert data.feats.shape == (5, 12, 32)
    table = generate_split("train", 5, DataParams(image_size=SIZE, sizes=SplitSizes(train=5)), split_seeds(0)["train"])
    direct = torch.cat([enc.encode(pics) for _, pics in shapes_batches(table)])  # the cache's batches: exact
    cast = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    assert torch.equal(data.feats.float(), direct.to(cast).float())


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
@pytest.mark.parametrize("features", ["patches", "pooled"])
@pytest.mark.parametrize("family", [*FAMILIES, "resnet_4x3", *UNLISTED])
def test_families_train_with_lora_and_evaluate(models, tiny_models, tmp_path, family, features, bf16):
    """The family test's path with real encoder features: the cache, stage 1, the LoRA recipe from it, the saved
    run rebuilt from its directory (its encoder too), and evaluation with every condition, in fp32 and bf16."""
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.shapes.evaluation.scoring import evaluate_split
    from frozenbridge.shapes.params import EvaluateParams, Params, ShapesParams, Stage1Until, TrainParams
    from frozenbridge.shapes.training.run import train

    enc = load_vision(str(models / family), features, None)
    data = encoded_split(enc, tmp_path / "train.parquet", 12, 0)
    test = encoded_split(enc, tmp_path / "test.parquet", 6, 1)
    lm = load_language(str(tiny_models["qwen2"]))
    prepare_frozen(lm.model, CPU, bf16)
    frozen = {k: v.clone() for k, v in lm.model.state_dict().items()}
    p = Params(shapes=ShapesParams(train=TrainParams(stage1_until=Stage1Until(share=0),
                                                     batch_size=4, stage1_steps=2, stage2_steps=2)))
    s1 = train(p, None, 0, data, lm, CPU, bf16, tmp_path / "stage1")
    run = train(p, "caption_qa_lora", 0, data, lm, CPU, bf16, tmp_path / "lora", stage1_dir=tmp_path / "stage1")
    assert np.isfinite(s1["final_loss"]) and np.isfinite(run["final_loss"]) and run["lora_params"] > 0
    base = {k.replace("base_model.model.", "").replace(".base_layer", ""): v
            for k, v in lm.model.state_dict().items() if "lora_" not in k}
    assert all(torch.equal(base[k], v) for k, v in frozen.items())  # the frozen weights never moved
    saved = load_run(tmp_path / "lora", CPU, bf16)
    connector = saved.model.connector
    if features == "patches":
        assert connector.grid == enc.grid and saved.config["encoder"]["grid"] == list(enc.grid)
        assert connector.n_out == -(-enc.grid[0] // 2) * -(-enc.grid[1] // 2)  # merge 2, padded where odd
    else:
        assert connector.pooled and saved.config["encoder"]["grid"] is None
    again = saved.encoder()
    assert again.grid == enc.grid and again.output_shape == enc.output_shape
    cfg = EvaluateParams(items=3, batch_size=8, caption_tokens=4, answer_tokens=2)
    scores, predictions = evaluate_split(saved.model, test, enc.encode([blank(SIZE)]), cfg, family)
    assert set(scores) == {"caption", "count", "binding", "leftmost"}
    assert all(len(predictions[t]) == scores[t]["n"] for t in scores)
