"""Training recipes as data: where the connector starts, and what each later phase trains on.

Stage 1 (captions) is trained once per replicate and shared: every recipe marked `from_stage1` starts from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from frozenbridge.shapes.params import TrainParams


@dataclass(frozen=True)
class Phase:
    data: str  # "captions", "questions" or "mix" (questions plus train.mix_captions captions a batch)
    steps: str  # "stage1", "stage2" or "both": which step counts from params it runs for
    lora: bool = False  # also train a LoRA adapter on every linear layer of the language model

    def n_steps(self, p: TrainParams) -> int:
        return {"stage1": p.stage1_steps, "stage2": p.stage2_steps, "both": p.stage1_steps + p.stage2_steps}[self.steps]

    def schedule(self, p: TrainParams) -> tuple[str, float]:
        """(schedule, warmup): the question phase after captions has its own; phases from a random connector (stage
        1, and qa's single phase) follow stage 1's."""
        if self.steps == "stage2":
            return p.stage2_schedule, p.stage2_warmup
        return p.stage1_schedule, p.stage1_warmup


@dataclass(frozen=True)
class Recipe:
    name: str
    from_stage1: bool
    phases: tuple[Phase, ...]
    summary: str


STAGE1_PHASE = Phase("captions", "stage1")  # the captions every recipe marked from_stage1 starts from

RECIPES = {r.name: r for r in (
    Recipe("caption", True, (), "stage 1 only: captions"),
    Recipe("qa", False, (Phase("questions", "both"),), "questions only, stage1+stage2 steps, from a random connector"),
    Recipe("caption_qa", True, (Phase("questions", "stage2"),), "stage 1, then questions"),
    Recipe("caption_qa_lora", True, (Phase("questions", "stage2", lora=True),),
           "stage 1, then questions with a rank-r LoRA on the language model"),
    Recipe("caption_qa_mix", True, (Phase("mix", "stage2"),), "stage 1, then questions with captions mixed in"),
)}
