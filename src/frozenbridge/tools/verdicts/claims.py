"""Every claim of the four references, judged on this repository's numbers: the verdict table of docs/results.md.

Each claim names the reference's number, the rule that decides it (rules.py), declared here with its thresholds
before any file is read, and the reader that turns metrics into the rule's cells (readers.py). The same `judge`
decides every row.

    python -m frozenbridge.tools.verdicts.claims     # every row as JSON
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from frozenbridge.comparison.report.tables import EQUAL_STEPS, OWN_BEST, VIEWS
from frozenbridge.tools.verdicts import readers as r
from frozenbridge.tools.verdicts.connector_readers import versus, zero_gate
from frozenbridge.tools.verdicts.grounds import raw_scores_note
from frozenbridge.tools.verdicts.readers import ALL_RECIPES, QUESTION_TASKS, Sources
from frozenbridge.tools.verdicts.regime_readers import AtTheView, regime, share_at_end
from frozenbridge.tools.verdicts.rules import (FAILS, HOLDS, OPEN, Ahead, AtLeast, AtMost, Beats, Evidence, Every,
                                               Inside, NoDifference, judge)

READS = 20.0  # points: the right picture's least gap over its best control for "the model reads the picture"
MARGIN = 10.0  # points: what "no consistent difference" allows the median paired difference
MOSTLY = 50.0  # %: "most" wrong answers
CEILING = 0.95  # share of the classifier's accuracy that "reaches the ceiling"
BARELY = 0.10  # accuracy above chance that "barely beats chance" allows
MERGE_COST = -5.0  # points: the most the 2x2 merge may lose and still "cost no accuracy"
# section 9's paired cells (test, task), the same at every view of the connector comparison
CROSS_ATTENTION_CELLS = (("heldout", "binding"), ("seen", "caption"), ("heldout", "caption"))
POOLING_CELLS = (("seen", "caption"), ("heldout", "binding"))
CODEBOOK_CELLS = (("seen", "caption"), ("heldout", "binding"))


@dataclass(frozen=True)
class Claim:
    study: str
    claim: str
    reference: str
    rule: object
    read: Callable[[Sources], Evidence]


def _paired(pair, test, tasks, command=ALL_RECIPES):
    return lambda s: r.pair(s, pair, test, tasks, command)


CLAIMS = (
    Claim("shapes", "The model reads the picture: take it away, blank it or swap it and the answers collapse",
          "every question-trained model loses at least 59 points on familiar pairs", AtLeast(READS, " points"),
          r.reads_the_picture),
    Claim("shapes", "Captioning first helps on held-out binding (paired)", "ahead in 5 of 5 seeds, +74 of 300",
          Ahead("second"), _paired("qa vs caption_qa", "heldout", ("binding",), "dvc repro shapes_analyze")),
    Claim("shapes", "Captioning first helps on held-out leftmost (paired)", "ahead in 5 of 5 seeds, +53 of 300",
          Ahead("second"), _paired("qa vs caption_qa", "heldout", ("leftmost",), "dvc repro shapes_analyze")),
    Claim("shapes", "Captioning first barely matters on seen pairs", "binding 94 vs 98; every recipe learned to answer",
          NoDifference(MARGIN), _paired("qa vs caption_qa", "seen", QUESTION_TASKS, "dvc repro shapes_analyze")),
    Claim("shapes", "LoRA gives no consistent gain", "count 95 vs 98, binding 99 vs 98, leftmost 84 vs 88 (3 seeds)",
          NoDifference(MARGIN), _paired("caption_qa vs caption_qa_lora", "seen", QUESTION_TASKS)),
    Claim("shapes", "Mixing captions into stage 2 helps held-out leftmost", "ahead in 5 of 5 seeds, +31 of 300",
          Ahead("second"), _paired("caption_qa vs caption_qa_mix", "heldout", ("leftmost",))),
    Claim("shapes", "Mixing captions into stage 2 does not help held-out binding", "ahead in 2 of 5 seeds, −4 of 300",
          NoDifference(MARGIN), _paired("caption_qa vs caption_qa_mix", "heldout", ("binding",))),
    Claim("shapes", "The 2x2 merge costs no caption accuracy at a quarter of the tokens (against the same connector "
          "unmerged)", "91 vs 76 captions right of 120 (49 vs 196 tokens)", AtLeast(MERGE_COST, " points"),
          r.merge_costs_nothing("unmerged")),
    Claim("shapes", "... and against an unmerged connector of the same size", "not measured by the reference",
          AtLeast(MERGE_COST, " points"), r.merge_costs_nothing("unmerged, size-matched")),
    Claim("shapes", "The frozen language model's text is unchanged by training",
          "bit-for-bit the downloaded model; perplexity 20.87 for every frozen recipe",
          Every("the language model's weights digest and passage perplexity the same after training as before, "
                "and before training the base model's"), r.frozen_text_unchanged),
    Claim("shapes", "LoRA's text moves", "20.87 → 20.89 (seeds 20.88–21.14)",
          Every("passage perplexity not the base model's"), r.lora_text_moves),
    Claim("shapes", "Wrong held-out colors come mostly from the picture (another shape's color)",
          "86% (QA only) to 98% of wrong binding answers", AtLeast(MOSTLY, "%"), r.wrong_colors_in_picture),
    Claim("shapes", "Captioning first cuts the wrong colors that are in no shape of the picture (paired)",
          "130 (QA only) vs 54 (Caption → QA), 5 seeds", Ahead("first"), r.captions_cut_colors_not_in_picture),
    Claim("shapes", "Shown another scene's picture, the answer follows the picture shown",
          "65–68 of 68 counting, 33–35 of 35 binding follow it; at most 3 keep the original's answer",
          AtLeast(READS, " points"), r.follows_the_shown_picture),
    Claim("shapes", "A held-out shape's color is easier to read after the stage-1 connector than at the encoder",
          "74.9% at the encoder → 88.9% after stage 1", Beats(), r.color_easier_after_connector),
    Claim("shapes", "The untrained two-picture question fails (no better than a coin in both orders)",
          "answers split across recipes; one question, one seed", AtMost(25.0, "% (a coin in both orders)"),
          r.two_pictures_fail),
    Claim("shapes", "With frozen backbones, gated cross-attention beats the sequence design (paired, at the MLP's "
          "settings)", "Idefics2 Finding 2: cross-attention performs better than fully autoregressive when frozen",
          Ahead("first"), versus("cross_attention-4", "mlp", CROSS_ATTENTION_CELLS)),
    Claim("shapes", "... each design at its own best (paired)", "Idefics2 Finding 2, each design trained to its best",
          Ahead("first"), versus("cross_attention-4", "mlp", CROSS_ATTENTION_CELLS, OWN_BEST)),
    Claim("shapes", "... judged by stage-1 steps to the stop rule's share, each at its own best (paired; still rising: "
          "inconclusive)", "Idefics2 Finding 2, at the view of learning speed", AtTheView("steps"),
          regime("cross_attention-4", "steps", OWN_BEST)),
    Claim("shapes", "... judged by the best share within stage 1's most steps, each at its own best (paired; still "
          "rising: inconclusive)", "Idefics2 Finding 2, at the view of the best each reaches", AtTheView("best"),
          regime("cross_attention-4", "best", OWN_BEST)),
    Claim("shapes", "... every design trained the same stage-1 steps (paired)", "Idefics2 Finding 2, at equal "
          "training", Ahead("first"), versus("cross_attention-4", "mlp", CROSS_ATTENTION_CELLS, EQUAL_STEPS)),
    Claim("shapes", "... judged by the share of training captions exact after the same stage-1 steps (paired)",
          "Idefics2 Finding 2, at equal training", Ahead("first"), share_at_end("cross_attention-4")),
    Claim("shapes", "Learned pooling to fewer tokens costs nothing (16 learned queries against 49 merged tokens, at "
          "the MLP's settings)", "Idefics2: +8.5 on average with 64 of 729 tokens", NoDifference(MARGIN),
          versus("resampler-16", "mlp", POOLING_CELLS)),
    Claim("shapes", "... each design at its own best", "Idefics2: +8.5 on average with 64 of 729 tokens, each trained "
          "to its best", NoDifference(MARGIN), versus("resampler-16", "mlp", POOLING_CELLS, OWN_BEST)),
    Claim("shapes", "... every design trained the same stage-1 steps", "Idefics2: +8.5 on average with 64 of 729 "
          "tokens, at equal training", NoDifference(MARGIN), versus("resampler-16", "mlp", POOLING_CELLS, EQUAL_STEPS)),
    Claim("shapes", "A zero-gated cross-attention model starts as the text model",
          "Flamingo, Llama 3.2 Vision: tanh(0) gates, so at step 0 the model is the text model",
          AtMost(0.0, " (largest |logit| difference)"), zero_gate()),
    Claim("shapes", "Codebook tokens fall behind continuous ones (paired, at the MLP's settings)",
          "discrete tokens behind continuous features with a small LM (several papers)", Ahead("second"),
          versus("codebook-1024", "mlp", CODEBOOK_CELLS)),
    Claim("shapes", "... each design at its own best (paired)", "discrete tokens behind continuous features, each "
          "trained to its best", Ahead("second"), versus("codebook-1024", "mlp", CODEBOOK_CELLS, OWN_BEST)),
    Claim("shapes", "... judged by stage-1 steps to the stop rule's share, each at its own best (paired; still rising: "
          "inconclusive)", "discrete tokens behind continuous features, at the view of learning speed",
          AtTheView("steps", "second"), regime("codebook-1024", "steps", OWN_BEST)),
    Claim("shapes", "... judged by the best share within stage 1's most steps, each at its own best (paired; still "
          "rising: inconclusive)", "discrete tokens behind continuous features, at the view of the best each reaches",
          AtTheView("best", "second"), regime("codebook-1024", "best", OWN_BEST)),
    Claim("shapes", "... every design trained the same stage-1 steps (paired)", "discrete tokens behind continuous "
          "features, at equal training", Ahead("second"), versus("codebook-1024", "mlp", CODEBOOK_CELLS, EQUAL_STEPS)),
    Claim("shapes", "... judged by the share of training captions exact after the same stage-1 steps (paired)",
          "discrete tokens behind continuous features, at equal training", Ahead("second"),
          share_at_end("codebook-1024")),
    Claim("digits", "The adapter reaches the classifier's ceiling", "0.9220 of 0.9307 (99%)",
          AtLeast(CEILING), r.adapter_reaches_ceiling),
    Claim("digits", "One prefix token barely beats chance", "barely beat chance (no number given)",
          AtMost(BARELY, " above chance"), r.one_token_near_chance),
    Claim("digits", "Captions are fluent before any adapter training", "'the digit is fo' before training",
          AtLeast(0.9, " well formed"), r.fluent_before_training),
    Claim("retrieval", "A frozen LM with an adaptor beats a text tower trained from scratch",
          "LLM2CLIP beats CLIP's own text towers (+1.0/+1.9 short, +14.8/+15.8 long)", Beats(),
          r.adaptor_beats_scratch),
    Claim("retrieval", "... and gains more on long captions than on short ones", "long +14.8/+15.8 vs short +1.0/+1.9",
          AtLeast(0.05, " R@1"), r.more_on_long_captions),
    Claim("onetoken", "One token from a pooled vector closes about a sixth of the agreement gap",
          "a sixth; seeds 8.6%, 12.6%, 28.2%", Inside(0.086, 0.282), r.share_of_gap),
    Claim("onetoken", "In the joint space a picture's own caption is its nearest far more often than chance",
          "60.9% of 2,000 pictures vs 0.05% by chance", AtLeast(10.0, "× chance"), r.own_caption_nearest),
    Claim("onetoken", "... and a matching pair is more similar than a mismatched one", "0.3268 vs 0.1668",
          AtLeast(0.0), r.matched_above_mismatched),
)


def views_judged() -> dict[str, int]:
    """{view of the connector comparison: how many claims read it}, from the view each claim's reader is marked with
    (connector_readers.at_view), in the views' order."""
    counts = {view: sum(getattr(c.read, "view", None) == view for c in CLAIMS) for view in VIEWS}
    return {view: n for view, n in counts.items() if n}


def views_judged_sentence(link: str = "results.md#the-references-claims-judged") -> str:
    """The connectors page's sentence on which views the verdicts on section 9's claims read (views_judged)."""
    counts = views_judged()
    if not counts:
        return ""
    named = {view: f"the {VIEWS[view][0].lower().replace(' ', '-')} view" for view in counts}
    which = f"{named[next(iter(counts))]} only" if len(counts) == 1 else "both views" if len(counts) == 2 else \
        f"all {len(counts)} views"
    each = ", ".join(f"{n} claim{'s' * (n != 1)} {named[view]}" for view, n in counts.items())
    return f"The verdicts on section 9's claims read {which} ({each}): [results]({link})."


def verdict_rows(root: Path) -> list[dict]:
    sources = Sources(root)
    rows = []
    for c in CLAIMS:
        evidence = c.read(sources)
        verdict, why = judge(c.rule, evidence)
        rows.append({"study": c.study, "claim": c.claim, "reference": c.reference, "ours": evidence.ours or "—",
                     "source": evidence.source or "—", "rule": c.rule.text, "verdict": verdict, "why": why,
                     "note": raw_scores_note(c.rule, verdict, evidence.grounds)})
    return rows


def verdict_counts(rows: list[dict]) -> str:
    """"24 claims: 5 hold, 10 do not hold, 9 inconclusive"."""
    n = {v: sum(r["verdict"] == v for r in rows) for v in (HOLDS, FAILS, OPEN)}
    return f"{len(rows)} claims: {n[HOLDS]} hold, {n[FAILS]} do not hold, {n[OPEN]} inconclusive"


def verdict_table(root: Path) -> list[str]:
    """The markdown table of every claim, with counts of each verdict above it."""
    rows = verdict_rows(root)
    out = [f"Every claim of the references, judged on this repository's numbers by rules fixed in "
           f"`src/frozenbridge/tools/verdicts/claims.py` before any file is read ({verdict_counts(rows)}). A verdict "
           "other than holds says why: the cells that fail, or what the numbers cannot yet settle and what would. A "
           "verdict that holds on right-picture scores says so where a side it stands on is not above its best "
           "control in every replicate (`tools/verdicts/grounds.py`).", "",
           "| study | claim | reference | here | rule | verdict |", "|---|---|---|---|---|---|"]
    for row in rows:
        verdict = row["verdict"] + (f" ({row['why']})" if row["why"] and row["verdict"] != "holds" else "") + \
            (f" ({row['note']})" if row["note"] else "")
        out.append(f"| {row['study']} | {row['claim']} | {row['reference']} | {row['ours']} (`{row['source']}`) | "
                   f"{row['rule']} | {verdict} |".replace(" (`—`)", ""))
    return out


if __name__ == "__main__":
    print(json.dumps(verdict_rows(Path(".")), indent=1))
