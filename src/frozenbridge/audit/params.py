"""The audit's view of params.yaml: its `audit:` section and the shared keys it reads (seed, device, vision,
language: the frozen backbones of the shapes study, so the shapes pictures exported as a folder are read by the same
encoder at the same layer).

The defaults are the shapes study's: the MLP over 2 x 2 merged patches, batches of 16, lr 1e-3, 200 caption steps
(constant) then 150 question steps (cosine after a 10% warmup), so an audit of the study's own pictures is a
replicate of its caption_qa recipe, drawn from the same seed streams (`replicates`). Stage 1 trains a fixed number
of steps here: the study's stop rule reads the captions it writes, and a user's captions need not be exact to be
useful (the audit reads its own learning curve instead, and says when the loss was still falling).
"""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.core.config import (boolean, boolean_or, choice, distinct_integers, field, fraction, integer, number,
                                      optional, text)
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.params import PRECISIONS, BackboneParams
from frozenbridge.core.schedule import SCHEDULES

ORDERS = ("columns", "rows")


@dataclass(frozen=True)
class AuditConnectorParams:
    """The MLP over merged patches (designs/mlp.py), the shapes study's default design."""
    merge: int = field(2, integer())  # each k x k block of patches -> one token
    hidden: int | None = field(None, optional(integer()))  # hidden width; null = the language model's width
    order: str = field("columns", choice(*ORDERS))  # image tokens column by column (left to right), or rows
    positions: bool = field(True, boolean())  # a learned vector added to each image token


@dataclass(frozen=True)
class AuditPrompts:
    caption: str = field("Caption:", text("a non-empty prompt written after the picture"))
    # {question} is replaced by the question; the answer follows
    question: str = field("Question: {question} Answer:", text("a prompt holding {question}"))


@dataclass(frozen=True)
class AuditTrainParams:
    batch_size: int = field(16, integer())  # captions a batch; question batches hold whole pictures, as many as
    # give this many questions on average, each picture's tokens once and its questions after it
    lr: float = field(1e-3, number(0, 1))
    stage1_steps: int = field(200, integer(0))  # captions (skipped when no training picture has one)
    stage2_steps: int = field(150, integer())  # the training questions
    stage1_schedule: str = field("constant", choice(*SCHEDULES))
    stage1_warmup: float = field(0.0, fraction())
    stage2_schedule: str = field("cosine", choice(*SCHEDULES))
    stage2_warmup: float = field(0.1, fraction())
    precision: str = field("auto", choice(*PRECISIONS))
    compile: bool | str = field("auto", boolean_or("auto"))  # torch.compile the decoder layers (core.precision)


@dataclass(frozen=True)
class AuditEvaluateParams:
    batch_size: int = field(128, integer())  # prompts decoded together
    # most new tokens an answer; null = the longest test answer's tokens plus two (the reference's rule)
    answer_tokens: int | None = field(None, optional(integer(), "an integer >= 1, or null for the longest test "
                                                                "answer's tokens plus two"))
    bootstrap: int = field(1000, integer(10))  # resamples of the test pictures for each gap's interval
    margin: float = field(10.0, number(0, 100))  # points: a gap or a probe's lead smaller than this is no lead
    probe_classes: int = field(20, integer(2))  # a kind with more distinct answers is not a closed set: no probe
    probe_examples: int = field(10, integer(2))  # training questions a wording needs for its probe


@dataclass(frozen=True)
class AuditParams:
    # train/ and test/, each with pictures and a metadata.jsonl (README: "Your own pictures and questions"); the
    # default is the shapes study's pictures, written there by the audit_folder stage
    folder: str = field("data/audit/shapes", text("a folder with train/ and test/, each holding a metadata.jsonl"))
    # the runs trained and checked, each from the shapes study's seed streams of that replicate (an audit of the
    # study's own pictures pairs with the study's runs); one for a folder of your own unless you ask for more
    replicates: tuple[int, ...] = field((0,), distinct_integers("[0], or [0, 1, 2, 3, 4] for five"))
    image_size: int = field(224, integer(32))  # side pictures are resized to for the embedded CNN
    prompts: AuditPrompts = field(AuditPrompts())
    connector: AuditConnectorParams = field(AuditConnectorParams())
    train: AuditTrainParams = field(AuditTrainParams())
    evaluate: AuditEvaluateParams = field(AuditEvaluateParams())

    def __post_init__(self):
        if self.prompts.question.count("{question}") != 1:
            raise FrozenbridgeError(f"audit.prompts.question = {self.prompts.question!r}: it must hold {{question}} "
                                    "once, where the question goes")

    def question_prompt(self, question: str) -> str:
        return self.prompts.question.replace("{question}", question)


@dataclass(frozen=True)
class Params(BackboneParams):
    audit: AuditParams = field(AuditParams())


load_params = Params.load
