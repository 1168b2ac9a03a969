"""Training recipes as data: where the connector starts, and what each later phase trains on.

Stage 1 (captions) is trained once per replicate and shared: every recipe marked `from_stage1` starts from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .params import TrainParams


@dataclass(frozen=True)
class Phase:
    data: str  # "captions", "questions" or "mix" (questions plus train.mix_captions captions a batch)
    steps: str  # "stage1", "stage2" or "both": which step counts from params it runs for
    lora: bool = False  # also train a LoRA adapter on every linear layer of the language model

    def n_steps(self, p: TrainParams) -> int:
        return {"stage1": p.stage1_steps, "stage2": p.stage2_steps, "both": p.stage1_steps + p.stage2_steps}[self.steps]


@dataclass(frozen=True)
class Recipe:
    name: str
    from_stage1: bool
    phases: tuple[Phase, ...]
    summary: str


STAGE1 = Phase("captions", "stage1")

RECIPES = {r.name: r for r in (
    Recipe("caption", True, (), "stage 1 only: captions"),
    Recipe("qa", False, (Phase("questions", "both"),), "questions only, stage1+stage2 steps, from a random connector"),
    Recipe("caption_qa", True, (Phase("questions", "stage2"),), "stage 1, then questions"),
    Recipe("caption_qa_lora", True, (Phase("questions", "stage2", lora=True),),
           "stage 1, then questions with a rank-r LoRA on the language model"),
    Recipe("caption_qa_mix", True, (Phase("mix", "stage2"),), "stage 1, then questions with captions mixed in"),
)}
