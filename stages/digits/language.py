"""Stage digits_language: train the character-level language model on the ten digit sentences, then freeze it.

A causal transformer (digits.language: width, layers, heads) reads "the digit is <word>" one character a token, with
digits.language.prefix slots always in front, filled by a learned null vector. Seeded from params.yaml `seed`.
Writes runs/digits/language/ (weights.pt, config.json) and metrics/digits/language.json (final loss, parameters,
and what it writes with nothing but the null in front: one of the ten sentences).
"""

import logging

import torch

from frozenbridge.core.atomic import write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.digits.captioning import greedy
from frozenbridge.digits.charlm import CharLM, train_language
from frozenbridge.digits.params import load_params
from frozenbridge.digits.paths import LANGUAGE, METRICS
from frozenbridge.digits.saved import save_model
from frozenbridge.digits.seeds import LANGUAGE as PART, stream
from frozenbridge.digits.sentences import VOCAB, captions, well_formed

log = logging.getLogger("frozenbridge.digits")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    lang = params.digits.language
    seed = stream(params.seed, PART)
    torch.manual_seed(seed)
    model = CharLM(lang.width, lang.layers, lang.heads, lang.prefix)
    losses = train_language(model, captions(), lang.steps, lang.batch_size, lang.lr, seed)
    unprompted = greedy(model, model.null.detach().expand(1, -1, -1))[0]
    log.info("character LM: final loss %.4f; with the null in front it writes %r", losses[-1], unprompted)
    save_model(LANGUAGE, model, {"width": lang.width, "layers": lang.layers, "heads": lang.heads,
                                 "prefix": lang.prefix})
    tail = losses[-50:]
    write_json(METRICS / "language.json", {
        "final_loss": round(losses[-1], 6), "last_50_mean_loss": round(sum(tail) / len(tail), 6),
        "parameters": sum(p.numel() for p in model.parameters()), "vocabulary": len(VOCAB), "steps": lang.steps,
        "with_null_prefix": unprompted, "with_null_prefix_well_formed": well_formed(unprompted)})


if __name__ == "__main__":
    run_cli(main)
