"""Stage digits_language: train the character-level language model on the ten digit sentences, then freeze it.

A causal transformer (digits.language: width, layers, heads) reads "the digit is <word>" one character a token, with
digits.language.prefix slots always in front, filled by a learned null vector. Seeded from params.yaml `seed`.
Writes runs/digits/language/ (weights.pt, config.json) and metrics/digits/language.json (final loss, parameters,
and what it writes with nothing but the null in front: one of the ten sentences).
"""

import logging

import torch

from frozenbridge.core.atomic import write_json
from frozenbridge.core.saved_module import save_module
from frozenbridge.core.seeds import seed_int
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.digits.data.sentences import VOCAB, captions, well_formed
from frozenbridge.digits.evaluation.scoring import greedy
from frozenbridge.digits.params import LANGUAGE_STREAM, STUDY_STREAM, load_params
from frozenbridge.digits.paths import LANGUAGE, METRICS
from frozenbridge.digits.training.charlm import CharLM, train_language

log = logging.getLogger("frozenbridge.digits")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    lang = params.digits.language
    seed = seed_int(params.seed, STUDY_STREAM, LANGUAGE_STREAM)
    torch.manual_seed(seed)
    model = CharLM(lang.width, lang.layers, lang.heads, lang.prefix)
    losses = train_language(model, captions(), lang.steps, lang.batch_size, lang.lr, seed)
    unprompted = greedy(model, model.null.detach().expand(1, -1, -1))[0]
    log.info("character LM: final loss %.4f; with the null in front it writes %r", losses[-1], unprompted)
    save_module(LANGUAGE, model, {"width": lang.width, "layers": lang.layers, "heads": lang.heads,
                                 "prefix": lang.prefix})
    tail = losses[-50:]
    write_json(METRICS / "language.json", {
        "final_loss": round(losses[-1], 6), "last_50_mean_loss": round(sum(tail) / len(tail), 6),
        "parameters": sum(p.numel() for p in model.parameters()), "vocabulary": len(VOCAB), "steps": lang.steps,
        "with_null_prefix": unprompted, "with_null_prefix_well_formed": well_formed(unprompted)})


if __name__ == "__main__":
    run_cli(main)
