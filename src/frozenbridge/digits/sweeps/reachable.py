"""Can a frozen character LM write each digit word at all? Fit one free prefix per digit (every slot a free vector,
started at the LM's learned null): the strongest thing any adapter could output, since an adapter can only map a
picture to some prefix. Reports the probability of each word's first letter after "the digit is " and the greedy
captions the ten fitted prefixes give.

    python -m frozenbridge.digits.sweeps.reachable runs/digits/language runs/digits-limits/language/seed1-steps1500

Writes results/digits-limits/reachable.json ({folder: {first_letter_p, captions, loss}}), merging by folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from frozenbridge.core.atomic import write_json
from frozenbridge.core.saved_module import load_module
from frozenbridge.digits.data.sentences import TEMPLATE, captions, sentence
from frozenbridge.digits.evaluation.scoring import greedy
from frozenbridge.digits.training import charlm

OUT = Path("results/digits-limits/reachable.json")
FIRST = len(TEMPLATE)  # text position whose logits predict the word's first letter (position 0 reads <bos>)


def reach(folder: Path, steps: int, lr: float) -> dict:
    lm = load_module(folder, charlm.build, "digits_language")[0]
    sentences = captions()
    prefix = lm.null.detach().repeat(10, 1, 1).clone().requires_grad_(True)
    optimizer = torch.optim.Adam([prefix], lr=lr)
    for _ in range(steps):
        loss = charlm.sentence_loss(lm, sentences, prefix)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        p = torch.softmax(lm(sentences[:, :-1], prefix)[:, FIRST], -1)
        first = [round(p[d, sentences[d, FIRST + 1]].item(), 4) for d in range(10)]
    written = greedy(lm, prefix.detach())
    return {"steps": steps, "lr": lr, "loss": round(loss.item(), 4), "first_letter_p": first, "captions": written,
            "words_written": sum(c == sentence(d) for d, c in enumerate(written))}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.digits.sweeps.reachable", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path, help="saved character LMs (weights.pt, config.json)")
    ap.add_argument("--steps", type=int, default=400, help="Adam steps fitting each digit's free prefix (default 400)")
    ap.add_argument("--lr", type=float, default=1e-2, help="their learning rate (default 1e-2)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    for folder in args.folders:
        out[str(folder)] = reach(folder, args.steps, args.lr)
        print(folder, out[str(folder)]["words_written"], "of 10 words;", out[str(folder)]["first_letter_p"])
        write_json(OUT, out)


if __name__ == "__main__":
    main()
