"""The shapes study's view of params.yaml: its `shapes:` section (recipes, data, connector, train, evaluate) and the
shared keys it reads (seed, device, replicates, vision, language), typed and validated once, up front, by every
stage through the core's field-driven validator (`frozenbridge.core.config`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frozenbridge.core.config import (boolean, boolean_or, choice, fail, field, fraction, integer, names, number,
                                      optional, span)
from frozenbridge.core.params import PRECISIONS, BackboneParams
from frozenbridge.core.schedule import SCHEDULES
from frozenbridge.designs import design_names
from frozenbridge.shapes.data.draw import most_that_fit
from frozenbridge.shapes.data.vocab import COLORS, KINDS, RECIPE_NAMES

ORDERS = ("rows", "columns")


def parse_pair(value: Any, key: str) -> tuple[str, str]:
    """'red triangle' -> ('red', 'triangle'), checking both words."""
    parts = value.split() if isinstance(value, str) else []
    if len(parts) != 2 or parts[0] not in COLORS or parts[1] not in KINDS:
        raise fail(key, value, f"'<color> <kind>' with color in {list(COLORS)} and kind in {list(KINDS)}")
    return parts[0], parts[1]


def pair_list(value: Any, key: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise fail(key, value, "a list like ['red triangle', 'green circle']")
    return tuple(parse_pair(p, f"{key}[{i}]") for i, p in enumerate(value))


@dataclass(frozen=True)
class SplitSizes:
    train: int = field(1500, integer())
    test_seen: int = field(120, integer())
    test_heldout: int = field(120, integer())


HELD_OUT = (("red", "triangle"), ("green", "circle"), ("blue", "square"))


@dataclass(frozen=True)
class DataParams:
    seed: int = field(0, integer(0))
    image_size: int = field(224, integer(32))
    shapes: tuple[int, int] = field((2, 4), span(int, 1, 9))
    shape_size: tuple[float, float] = field((0.18, 0.26), span(float, 0.05, 0.5))
    held_out: tuple[tuple[str, str], ...] = field(HELD_OUT, pair_list, raw=[" ".join(p) for p in HELD_OUT])
    sizes: SplitSizes = field(SplitSizes())

    def validate(self, key: str) -> None:
        held = [" ".join(p) for p in self.held_out]
        for kind in KINDS:
            if all((c, kind) in self.held_out for c in COLORS):
                raise fail(f"{key}.held_out", held, f"a list that leaves at least one color of every kind ({kind})")
        for color in COLORS:
            if all((color, k) in self.held_out for k in KINDS):
                raise fail(f"{key}.held_out", held, f"a list that leaves at least one kind of every color ({color})")
        fit = most_that_fit(self.image_size, self.shape_size[0])
        if self.shapes[1] > fit:
            raise fail(f"{key}.shapes", list(self.shapes),
                       f"at most {fit} shapes: no more fit a {self.image_size}px picture without overlap when the "
                       f"smallest is {self.shape_size[0]} of its side ({key}.shape_size)")


@dataclass(frozen=True)
class MlpKnobs:
    """design: mlp (designs/mlp.py, the reference's): merged patches through a two-layer MLP."""
    merge: int = field(2, integer())  # k: each k x k block of neighbouring patches becomes one token (1 = no merge)
    hidden: int | None = field(None, optional(integer()))  # MLP hidden width; null = the language model's width
    prefix_tokens: int = field(1, integer())  # tokens made from a pooled vector
    order: str = field("columns", choice(*ORDERS))  # image tokens column by column (left to right) or row by row
    norm: bool = field(False, boolean())  # LayerNorm on the connector's input
    positions: bool = field(True, boolean())  # a learned vector per image token, added to its output
    init_scale: float = field(1.0, number(0, 10))  # the last layer's initial weights are multiplied by this


@dataclass(frozen=True)
class ResamplerKnobs:
    """design: resampler (designs/resampler.py): learned queries read the patches."""
    latents: int = field(49, integer())  # its learned queries, so its image tokens
    depth: int = field(1, integer())  # blocks of attention and feed-forward the queries pass through
    query_scale: float = field(1.0, number(0, 100))  # the queries' initial spread, times 1/sqrt(their width)
    heads: int = field(4, integer())
    head_dim: int = field(64, integer())


@dataclass(frozen=True)
class CrossAttentionKnobs:
    """design: cross_attention (designs/cross_attention.py): gated blocks inside the frozen model."""
    every: int = field(4, integer())  # a block before every `every`-th decoder layer
    heads: int = field(2, integer())
    head_dim: int = field(32, integer())
    gate_init: float = field(0.0, number(-10, 10))  # each gate's start (its tanh scales the block; 0: the text model)
    gate_lr: float | None = field(None, optional(number(0, 1)))  # the gates' own learning rate; null: train.lr
    feed_forward: bool = field(False, boolean())  # a gated feed-forward after each block's attention (Flamingo's)


@dataclass(frozen=True)
class CodebookKnobs:
    """design: codebook (designs/codebook.py): each merged patch -> its nearest k-means code -> an embedding."""
    codes: int = field(1024, integer())  # k-means codes fitted on the training pictures' merged patches
    merge: int = field(2, integer())
    order: str = field("columns", choice(*ORDERS))
    positions: bool = field(True, boolean())
    embedding_lr: float | None = field(None, optional(number(0, 1)))  # the codes' embeddings' own; null: train.lr


@dataclass(frozen=True)
class ConnectorParams:
    # how the picture reaches the language model, a file each in designs/: mlp (merged patches -> MLP -> image
    # tokens, the reference's), resampler (learned queries), cross_attention (gated blocks inside the frozen model,
    # no image tokens), codebook (each merged patch -> its nearest k-means code -> a trained embedding)
    design: str = field("mlp", choice(*design_names()))
    # each design's knobs, read by that design alone (a design with none needs no section)
    mlp: MlpKnobs = field(MlpKnobs())
    resampler: ResamplerKnobs = field(ResamplerKnobs())
    cross_attention: CrossAttentionKnobs = field(CrossAttentionKnobs())
    codebook: CodebookKnobs = field(CodebookKnobs())

    def knobs(self) -> Any:
        """The chosen design's section, or None for a design that has none."""
        return getattr(self, self.design, None)


@dataclass(frozen=True)
class Stage1Until:
    """Stage 1 past its `stage1_steps`: every `every` steps it captions its first `items` training pictures and stops
    once a `share` of them is exactly right, or at `max_steps` (training.stage1_rule says why)."""
    share: float = field(0.6, fraction())  # 0 turns the rule off: stage 1 trains stage1_steps exactly
    items: int = field(60, integer())
    every: int = field(50, integer())
    max_steps: int = field(600, integer())


@dataclass(frozen=True)
class TrainParams:
    batch_size: int = field(16, integer())
    lr: float = field(1e-3, number(0, 1))
    # learning-rate schedules: stage 1 and qa (phases that start from a random connector), then the question phase
    # that follows captions; constant, or cosine decay to a tenth of lr, after a linear warmup over a fraction
    stage1_schedule: str = field("constant", choice(*SCHEDULES))
    stage1_warmup: float = field(0.0, fraction())
    stage2_schedule: str = field("cosine", choice(*SCHEDULES))
    stage2_warmup: float = field(0.1, fraction())
    stage1_steps: int = field(200, integer())  # the fewest: then stage1_until decides
    stage1_until: Stage1Until = field(Stage1Until())
    stage2_steps: int = field(150, integer())
    mix_captions: int = field(4, integer())  # captions added to each stage-2 batch of the caption_qa_mix recipe
    lora_rank: int = field(8, integer())
    lora_alpha: int = field(16, integer())
    lora_lr: float = field(1e-4, number(0, 1))
    # auto: bf16 where the hardware has it (CPU bf16 instructions, CUDA), else fp32
    precision: str = field("auto", choice(*PRECISIONS))
    # steps between checkpoints (0 = none); a killed run resumes from the last one
    checkpoint_every: int = field(20, integer(0))
    # torch.compile each decoder layer of the frozen model for training: auto (every training run, on a CPU with a
    # C++ compiler: core.precision.compile_choice), true (every training run, any device), false
    compile: bool | str = field("auto", boolean_or("auto"))
    # processes a training run is split over (one per GPU; torchrun starts them): each takes its share of every
    # batch and their gradients are summed, so the loss curve is the one-process curve
    processes: int = field(1, integer())

    def validate(self, key: str) -> None:
        if self.stage1_until.share > 0 and self.stage1_until.max_steps < self.stage1_steps:
            raise fail(f"{key}.stage1_until.max_steps", self.stage1_until.max_steps,
                       f"an integer >= {key}.stage1_steps ({self.stage1_steps}): stage 1 trains at least that many")


@dataclass(frozen=True)
class EvaluateParams:
    items: int = field(60, integer())  # items per task and test set (captions: pictures; questions: of each type)
    # prompts decoded together (bench evaluation: 128 at a time 1.18x the prompts a second of 32 on a 2-core CPU)
    batch_size: int = field(128, integer())
    caption_tokens: int = field(28, integer())  # most new tokens for a caption
    answer_tokens: int = field(4, integer())  # most new tokens for an answer


@dataclass(frozen=True)
class ShapesParams:
    """The `shapes:` section."""
    recipes: tuple[str, ...] = field(("caption", "qa", "caption_qa"), names(RECIPE_NAMES))
    data: DataParams = field(DataParams())
    connector: ConnectorParams = field(ConnectorParams())
    train: TrainParams = field(TrainParams())
    evaluate: EvaluateParams = field(EvaluateParams())


@dataclass(frozen=True)
class Params(BackboneParams):
    shapes: ShapesParams = field(ShapesParams())


load_params = Params.load
