"""The reference study's training schedule (../shared/reference/shapes-vlm-study.txt, its main demo) and what it
comes to from a machine's measured step times: the arithmetic behind `python -m frozenbridge.bench reference`'s
derived study time."""

from __future__ import annotations

# The reference's main demo (../shared/reference/shapes-vlm-study.txt): 11 trainings. Stage 1 once at 49 tokens and
# once at 196 (the merge check, "three times slower"); stage 2's three versions, each at seeds 0, 1, 2.
REFERENCE_STEP_S = {"stage1": 1.02, "stage1_196": 3.05, "qa": 0.89, "caption_qa": 0.91, "caption_qa_lora": 1.11}
SCHEDULE = (  # (run, trainings, steps each, the measured step time it takes, scaled by, the reference's step time)
    ("stage 1, 49 tokens", 1, 400, "stage1", 1.0, "stage1"),
    ("stage 1, 196 tokens", 1, 400, "stage1", REFERENCE_STEP_S["stage1_196"] / REFERENCE_STEP_S["stage1"],
     "stage1_196"),
    ("QA only", 3, 800, "question", 1.0, "qa"),
    ("Caption -> QA", 3, 400, "question", 1.0, "caption_qa"),
    ("Caption -> QA + LoRA", 3, 400, "lora", 1.0, "caption_qa_lora"),
)
FORMULA = "400 s1 + 400 s1 x 3.05 / 1.02 + 3 x 800 q + 3 x 400 q + 3 x 400 l"
FORMULA_TERMS = ("s1 = stage 1 step; q = question step (caption_qa; QA only's step is the same kind: 0.89 vs 0.91 s "
                 "in the reference); l = LoRA step (caption_qa_lora, or q x 1.11 / 0.91 with --no-lora); the 196-token "
                 "stage 1 is the 49-token step x the reference's own 3.05 / 1.02")


def derived_study(steps: dict[str, float]) -> dict:
    """The reference study's training time from step times {stage1, question, lora} (seconds a step), term by term
    beside the reference's own."""
    terms = [{"run": run, "trainings": n, "steps": k, "step": which, "scale": scale,
              "seconds": n * k * steps[which] * scale, "reference_seconds": n * k * REFERENCE_STEP_S[ref]}
             for run, n, k, which, scale, ref in SCHEDULE]
    return {"formula": FORMULA, "where": FORMULA_TERMS, "terms": terms, "seconds": sum(t["seconds"] for t in terms),
            "reference_seconds": sum(t["reference_seconds"] for t in terms)}
