"""The one-token study's view of params.yaml: its `onetoken:` section and the shared keys it reads (seed, device,
replicates, vision, language). When the encoder has no text tower of its own, the captions are scored with the
retrieval study's trained tower, which that study rebuilds from its own params (retrieval.interface)."""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.core.config import boolean_or, choice, field, fraction, integer, number, optional, text
from frozenbridge.core.params import PRECISIONS, BackboneParams
from frozenbridge.core.schedule import SCHEDULES

SCORER_TOWERS = ("adaptor", "linear")  # retrieval towers that can embed any text (the scratch tower knows its words)


@dataclass(frozen=True)
class EncoderParams:
    """The frozen encoder whose pooled vector is the picture: the embedded CNN's head averaged over its grid, CLIP's
    projected image embedding, SigLIP's attention pool, ..."""
    name: str = field("efficientnet-lite0", text("'efficientnet-lite0', a Hugging Face model id or a local directory"))
    batch_size: int = field(32, integer())
    image_size: int = field(224, integer(32))  # side pictures are resized to for the embedded CNN (others: their own)


@dataclass(frozen=True)
class OneTokenTrainParams:
    steps: int = field(200, integer())
    batch_size: int = field(16, integer())
    lr: float = field(1e-3, number(0, 1))
    schedule: str = field("cosine", choice(*SCHEDULES))  # constant, or cosine decay to lr/10
    warmup: float = field(0.05, fraction())  # linear warmup over this fraction of the steps
    precision: str = field("auto", choice(*PRECISIONS))
    # torch.compile the decoder layers for the training steps (core.precision.compile_choice); captions decode eager
    compile: bool | str = field("auto", boolean_or("auto"))


@dataclass(frozen=True)
class OneTokenEvaluateParams:
    batch_size: int = field(32, integer())
    caption_tokens: int = field(28, integer())  # most new tokens a caption
    pictures: int | None = field(None, optional(integer(), "an integer >= 1, or null for every test picture"))


@dataclass(frozen=True)
class AgreementParams:
    # the retrieval study's tower that scores captions when the encoder has no text tower (CLIP and SigLIP use theirs)
    tower: str = field("adaptor", choice(*SCORER_TOWERS))
    shown: int = field(8, integer(2))  # pictures in the alignment heatmap


@dataclass(frozen=True)
class OneTokenParams:
    # a folder of pictures with captions in the datasets imagefolder layout (metadata.jsonl or metadata.csv with
    # file_name and text); the default is the shapes pictures, written there by the onetoken_folder stage
    folder: str = field("data/onetoken/shapes", text("a folder of pictures with metadata.jsonl or metadata.csv"))
    test_fraction: float = field(0.2, number(0, 0.9))  # pictures held out when the folder has no train/ and test/
    split_seed: int = field(0, integer(0))  # the draw of those test pictures
    encoder: EncoderParams = field(EncoderParams())
    prefix_tokens: int = field(1, integer())  # tokens the MLP makes from the pooled vector
    hidden: int | None = field(None, optional(integer()))  # MLP hidden width; null = the language model's width
    prompt: str = field("This is a picture of:", text("a non-empty prompt written before the picture"))
    train: OneTokenTrainParams = field(OneTokenTrainParams())
    evaluate: OneTokenEvaluateParams = field(OneTokenEvaluateParams())
    agreement: AgreementParams = field(AgreementParams())


@dataclass(frozen=True)
class Params(BackboneParams):  # vision: the shapes features the retrieval study's projection reads
    onetoken: OneTokenParams = field(OneTokenParams())


load_params = Params.load
