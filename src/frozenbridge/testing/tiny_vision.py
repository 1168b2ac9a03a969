"""Tiny random-weight vision encoders for the tests, saved with save_pretrained: CLIP and SigLIP (whose text towers
use the tiny tokenizer), ViT, DINOv2 with and without registers, the feature-map models ResNet, RegNet, ConvNeXt
(V1, V2), MobileNetV2 and EfficientNet, and the token models Swin and LeViT whose stages downsample; VISION_FAMILIES
names each builder."""

from __future__ import annotations

from pathlib import Path

import torch

from frozenbridge.testing.tiny_language import build_tokenizer

def _vision_cfg(image_size: int, patch: int) -> dict:
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                image_size=image_size, patch_size=patch)


def _text_cfg(path: Path) -> dict:
    """A one-layer text tower with the tiny tokenizer, saved beside it (the retrieval study embeds captions)."""
    tokenizer = build_tokenizer(path, end_with_eos=True)
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                vocab_size=len(tokenizer), max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id)


def build_clip(path: Path, image_size: int = 32, patch: int = 8) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    text = _text_cfg(path)
    torch.manual_seed(0)
    CLIPModel(CLIPConfig(vision_config=_vision_cfg(image_size, patch), text_config=text,
                         projection_dim=24)).save_pretrained(path)
    CLIPImageProcessor(size={"shortest_edge": image_size},
                       crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_siglip(path: Path, image_size: int = 32, patch: int = 8) -> None:
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    text = _text_cfg(path)
    torch.manual_seed(0)
    SiglipModel(SiglipConfig(vision_config=_vision_cfg(image_size, patch), text_config=text)).save_pretrained(path)
    SiglipImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_vit(path: Path, image_size: int = 32, patch: int = 8) -> None:
    """A ViT (one class token in front of the patches, a pooler on it)."""
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    torch.manual_seed(0)
    ViTModel(ViTConfig(**_vision_cfg(image_size, patch))).save_pretrained(path)
    ViTImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_dinov2(path: Path, registers: int = 0, image_size: int = 32, patch: int = 8) -> None:
    """A DINOv2 (class token, and `registers` register tokens when > 0, in front of the patches). Its processor
    resizes the short side to 1.25x and center-crops to `image_size`, as DINOv2's does (256 -> 224)."""
    import transformers
    from transformers import BitImageProcessor

    cfg = {k: v for k, v in _vision_cfg(image_size, patch).items() if k != "intermediate_size"}
    torch.manual_seed(0)
    if registers:
        model = transformers.Dinov2WithRegistersModel(
            transformers.Dinov2WithRegistersConfig(num_register_tokens=registers, **cfg))
    else:
        model = transformers.Dinov2Model(transformers.Dinov2Config(**cfg))
    model.save_pretrained(path)
    BitImageProcessor(size={"shortest_edge": image_size * 5 // 4},
                      crop_size={"height": image_size, "width": image_size},
                      do_center_crop=True).save_pretrained(path)


def _map_processor(size: tuple[int, int]):
    """ConvNeXt's processor at a square `size` (what ResNet, RegNet and ConvNeXt checkpoints ship: it resizes the
    short side to size / 0.875 and center-crops), else one that resizes to `size` = (height, width) exactly."""
    from transformers import ConvNextImageProcessor, ViTImageProcessor

    height, width = size
    if height == width:
        return ConvNextImageProcessor(size={"shortest_edge": height})
    return ViTImageProcessor(size={"height": height, "width": width})


def build_resnet(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage ResNet of basic blocks (8 -> 16 -> 32 channels, stride 8: 32 px make a 4 x 4 map; a (32, 24)
    `size` a 4 x 3 one). Its pooler_output is an average pool, (batch, 32, 1, 1)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    ResNetModel(ResNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1],
                             layer_type="basic")).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_regnet(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage RegNet-Y (8 -> 16 -> 32 channels, stride 8, average-pooled like ResNet)."""
    from transformers import RegNetConfig, RegNetModel

    torch.manual_seed(0)
    RegNetModel(RegNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1],
                             groups_width=8)).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_convnext(path: Path, v2: bool = False, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage ConvNeXt (V2 with `v2`): a 4 x 4 patch stem, 16 -> 32 channels, stride 8; its pooler_output is
    the layer-normed mean of the last map, (batch, 32)."""
    import transformers

    config, model = ((transformers.ConvNextV2Config, transformers.ConvNextV2Model) if v2 else
                     (transformers.ConvNextConfig, transformers.ConvNextModel))
    torch.manual_seed(0)
    model(config(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_mobilenet_v2(path: Path, image_size: int = 64) -> None:
    """A MobileNetV2 at depth multiplier 0.35 (a 448-channel head, stride 32: 64 px make a 2 x 2 map; 16 hidden
    states, one a block) with its own processor."""
    from transformers import MobileNetV2Config, MobileNetV2ImageProcessor, MobileNetV2Model

    torch.manual_seed(0)
    MobileNetV2Model(MobileNetV2Config(depth_multiplier=0.35, finegrained_output=False,
                                       image_size=image_size)).save_pretrained(path)
    MobileNetV2ImageProcessor(size={"shortest_edge": image_size},
                              crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_efficientnet(path: Path, image_size: int = 64) -> None:
    """Transformers' EfficientNet (B0's stages at width 0.1, one block each: a 128-channel head, stride 32: 64 px
    make a 2 x 2 map; 8 hidden states, the stem's and one a block) with its own processor."""
    from transformers import EfficientNetConfig, EfficientNetImageProcessor, EfficientNetModel

    torch.manual_seed(0)
    EfficientNetModel(EfficientNetConfig(image_size=image_size, width_coefficient=0.1, depth_coefficient=0.1,
                                         hidden_dim=128)).save_pretrained(path)
    EfficientNetImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_swin(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A three-stage Swin (patch 4, 16 -> 32 -> 64 wide, window 2): token sequences whose stages halve the grid,
    so 32 px make 8 x 8, 4 x 4, then 2 x 2 tokens (not the picture over the patch size); a (32, 24) `size` makes
    8 x 6 and 4 x 3 stages. It returns each stage reshaped to a (batch, width, H, W) map too."""
    from transformers import SwinConfig, SwinModel, ViTImageProcessor

    torch.manual_seed(0)
    SwinModel(SwinConfig(image_size=max(size), patch_size=4, embed_dim=16, depths=[1, 1, 1], num_heads=[1, 2, 4],
                         window_size=2)).save_pretrained(path)
    ViTImageProcessor(size={"height": size[0], "width": size[1]}).save_pretrained(path)


def build_levit(path: Path, image_size: int = 128) -> None:
    """A three-stage LeViT (16 -> 32 -> 48 wide): token sequences with no class token and no reshaped maps whose
    stages subsample 2x, so 128 px make 8 x 8 tokens (the picture over its patch size 16), then 4 x 4 and 2 x 2
    (squares only); average-pooled."""
    from transformers import LevitConfig, LevitImageProcessor, LevitModel

    torch.manual_seed(0)
    LevitModel(LevitConfig(image_size=image_size, hidden_sizes=[16, 32, 48], num_attention_heads=[1, 2, 3],
                           depths=[1, 1, 1], key_dim=[8, 8, 8], down_ops=[["Subsample", 8, 1, 4, 2, 2],
                                                                          ["Subsample", 8, 2, 4, 2, 2]])
               ).save_pretrained(path)
    LevitImageProcessor(size={"shortest_edge": image_size * 8 // 7},
                        crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


VISION_FAMILIES = {"clip": build_clip, "siglip": build_siglip, "vit": build_vit, "dinov2": build_dinov2,
                   "dinov2_with_registers": lambda path: build_dinov2(path, registers=4),
                   # feature-map models: (batch, width, H, W) hidden states, read as an H x W grid
                   "resnet": build_resnet, "regnet": build_regnet, "convnext": build_convnext,
                   "convnextv2": lambda path: build_convnext(path, v2=True), "mobilenet_v2": build_mobilenet_v2,
                   "efficientnet": build_efficientnet,
                   # token sequences downsampled past the patch grid: Swin's come with their own reshaped maps
                   "swin": build_swin, "levit": build_levit}
