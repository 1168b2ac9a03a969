"""The retrieval study's view of params.yaml: its `retrieval:` section, the shared keys it reads (seed, device,
replicates, vision, language), and the shapes study's section (through its interface): the study trains on the
shapes pictures and their cached features, and draws its short captions with shapes.data's seed and held-out pairs."""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.core.config import choice, fail, field, fraction, integer, names, number
from frozenbridge.core.params import PRECISIONS, BackboneParams
from frozenbridge.shapes.interface import ShapesParams

TOWERS = ("adaptor", "linear", "scratch", "vision_text")
POOLS = ("mean", "last")


@dataclass(frozen=True)
class TextParams:
    """How a caption becomes one vector in the embed stage (the frozen models' side: changing it re-embeds)."""
    pool: str = field("mean", choice(*POOLS))  # mean of the last hidden states over the caption's tokens, or the last
    batch_size: int = field(64, integer())
    precision: str = field("auto", choice(*PRECISIONS))


@dataclass(frozen=True)
class AdaptorParams:
    hidden: int = field(512, integer())  # the MLP's hidden width (Linear -> GELU -> Linear)


@dataclass(frozen=True)
class ScratchParams:
    """The small text transformer trained from scratch: the stand-in for CLIP's own text tower."""
    width: int = field(64, integer())
    layers: int = field(2, integer())
    heads: int = field(4, integer())

    def validate(self, key: str) -> None:
        if self.width % self.heads:
            raise fail(f"{key}.heads", self.heads, f"a divisor of {key}.width = {self.width}")


@dataclass(frozen=True)
class RetrievalTrainParams:
    epochs: int = field(60, integer())
    batch_size: int = field(128, integer(2))  # pictures a batch; each brings its long and its short caption
    lr: float = field(1e-3, number(0, 1))
    weight_decay: float = field(0.01, fraction())
    temperature: float = field(0.07, number(0, 1))  # initial; learned (CLIP's log scale, capped at 100)


@dataclass(frozen=True)
class RetrievalParams:
    text: TextParams = field(TextParams())
    # text towers trained on the same loss and data, one run each per replicate; vision_text (CLIP's or SigLIP's own
    # text tower) needs vision.name to be such a model
    towers: tuple[str, ...] = field(("adaptor", "linear", "scratch"), names(TOWERS))
    adaptor: AdaptorParams = field(AdaptorParams())
    scratch: ScratchParams = field(ScratchParams())
    train: RetrievalTrainParams = field(RetrievalTrainParams())
    dim: int = field(128, integer())  # the shared space both sides are projected into


@dataclass(frozen=True)
class Params(BackboneParams):
    """The study's section, and the shapes study's: the pictures it trains on and how their short captions are drawn."""
    retrieval: RetrievalParams = field(RetrievalParams())
    shapes: ShapesParams = field(ShapesParams())

    def validate(self, key: str) -> None:
        if "vision_text" in self.retrieval.towers and self.vision.name == "efficientnet-lite0":
            raise fail("retrieval.towers", list(self.retrieval.towers),
                       "towers from [adaptor, linear, scratch]: vision_text is the vision model's own text tower "
                       "and vision.name = 'efficientnet-lite0' has none (name a CLIP or SigLIP model)")


load_params = Params.load
