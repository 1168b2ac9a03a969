"""Feature-map vision models (ResNet, RegNet, ConvNeXt V1/V2, MobileNetV2): a (batch, width, H, W) map read row by
row as an H x W grid, which need not be square, or the model's own pooled vector; through the feature cache,
training (stage 1 and the LoRA recipe), the saved run and evaluation, in fp32 and in bf16."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.backbones.vision import HFVision
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import check_features, decode_png, encode_images, load_feature_tensor
from frozenbridge.core.precision import prepare_frozen
from frozenbridge.shapes.data.draw import blank
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.shapes.params import DataParams, SplitSizes
from frozenbridge.shapes.training.split_data import SplitData

CPU = torch.device("cpu")
FAMILIES = ("resnet", "regnet", "convnext", "convnextv2", "mobilenet_v2")
SIZE = 64  # the shapes pictures' side


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    """Each family's tiny model, and a ResNet and a ConvNeXt whose processor makes 32 x 24 pictures (4 x 3 maps)."""
    from frozenbridge.testing.tiny_models import VISION_FAMILIES, build_convnext, build_resnet

    root = tmp_path_factory.mktemp("map-models")
    for family in FAMILIES:
        VISION_FAMILIES[family](root / family)
    build_resnet(root / "resnet_4x3", size=(32, 24))
    build_convnext(root / "convnext_4x3", size=(32, 24))
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
def test_patches_and_pooled_are_the_models_own_outputs(maps, family):
    name = str(maps / family)
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
def test_the_grid_is_read_from_the_map_and_need_not_be_square(maps, family):
    """32 x 24 pictures make a 4 x 3 map (stride 8); token r * 3 + c is the map's column at row r, column c."""
    enc = load_vision(str(maps / family), "patches", None)
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
    assert load_vision(str(maps / family), "patches", 0).grid == (8, 6)  # the stem's map: stride 4


@pytest.mark.parametrize("family", FAMILIES)
def test_a_bad_layer_fails_in_one_line_naming_what_is_allowed(maps, family):
    name = str(maps / family)
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


def test_a_language_model_is_refused_and_the_message_lists_the_map_families(tiny_models):
    with pytest.raises(FrozenbridgeError) as info:
        load_vision(str(tiny_models["qwen2"]), layer=None)
    msg = str(info.value)
    assert "'qwen2' model, not a vision encoder with patch tokens or a feature map" in msg and "\n" not in msg
    assert all(family in msg for family in HFVision.MAPS) and set(FAMILIES) == set(HFVision.MAPS)


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
def test_the_feature_cache_round_trips_a_non_square_grid(maps, tmp_path, dtype):
    enc = load_vision(str(maps / "resnet_4x3"), "patches", None)
    data = encoded_split(enc, tmp_path / "f.parquet", 5, 0, dtype)
    assert data.meta["grid"] == [4, 3] and data.meta["output_shape"] == [4, 3, 32] and data.meta["tokens"] == 12
    assert data.feats.shape == (5, 12, 32)
    table = generate_split("train", 5, DataParams(image_size=SIZE, sizes=SplitSizes(train=5)), split_seeds(0)["train"])
    direct = torch.cat([enc.encode(pics) for _, pics in shapes_batches(table)])  # the cache's batches: exact
    cast = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    assert torch.equal(data.feats.float(), direct.to(cast).float())


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
@pytest.mark.parametrize("features", ["patches", "pooled"])
@pytest.mark.parametrize("family", [*FAMILIES, "resnet_4x3"])
def test_map_families_train_with_lora_and_evaluate(maps, tiny_models, tmp_path, family, features, bf16):
    """The family test's path with real encoder features: the cache, stage 1, the LoRA recipe from it, the saved
    run rebuilt from its directory (its encoder too), and evaluation with every condition, in fp32 and bf16."""
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.shapes.evaluation.scoring import evaluate_split
    from frozenbridge.shapes.params import EvaluateParams, Params, ShapesParams, TrainParams
    from frozenbridge.shapes.training.run import train

    enc = load_vision(str(maps / family), features, None)
    data = encoded_split(enc, tmp_path / "train.parquet", 12, 0)
    test = encoded_split(enc, tmp_path / "test.parquet", 6, 1)
    lm = load_language(str(tiny_models["qwen2"]))
    prepare_frozen(lm.model, CPU, bf16)
    frozen = {k: v.clone() for k, v in lm.model.state_dict().items()}
    p = Params(shapes=ShapesParams(train=TrainParams(batch_size=4, stage1_steps=2, stage2_steps=2)))
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
