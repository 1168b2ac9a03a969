"""The digits study's greedy captions with the KV cache against recomputing the whole sequence each character.

    python -m frozenbridge.bench digits --out bench/digits-cpu-2core.json
    python -m frozenbridge.bench digits --quick

Every digits_train stage captions all of its test digits greedily before training and after each epoch (25 times at
the defaults), with the frozen character model (digits.language's sizes) and prefixes from the adapter. This times
one such captioning at the study's sizes, random weights (the captions run to full length either way): the study's
first greedy, which ran the whole sequence through the model for each new character, against greedy with the keys
and values of the earlier positions cached (CharLM.extend), which the study now uses. Both must write the same
captions, or the bench stops. Rows: seconds to caption the test digits, cached against recomputed (above 1: the
cache is faster), and the same for a whole adapter epoch (its training steps and its captions).
"""

from __future__ import annotations

import argparse

import torch

from frozenbridge.bench.command_line import run_and_save
from frozenbridge.bench.rows import row


@torch.no_grad()
def recomputed(model, prefix: torch.Tensor) -> list[str]:
    """Greedy as the study first wrote it: the whole sequence through the model again for every character."""
    from frozenbridge.digits.data.sentences import BOS, EOS, LENGTH, decode

    tokens = torch.full((len(prefix), 1), BOS)
    for _ in range(LENGTH - 1):
        tokens = torch.cat([tokens, model(tokens, prefix)[:, -1].argmax(-1, keepdim=True)], dim=1)
        if bool((tokens == EOS).any(dim=1).all()):
            break
    return [decode(row) for row in tokens.tolist()]


def run(args) -> tuple[list[dict], dict]:
    from frozenbridge.core.measure import timed
    from frozenbridge.digits.data.sentences import captions
    from frozenbridge.digits.evaluation.scoring import greedy
    from frozenbridge.digits.params import load_params
    from frozenbridge.digits.training.adapter import Adapter
    from frozenbridge.digits.training.charlm import CharLM, sentence_loss

    d = load_params("params.yaml").digits
    n = 100 if args.quick else d.data.test
    reps = 1 if args.quick else args.reps
    torch.manual_seed(0)
    model = CharLM(d.language.width, d.language.layers, d.language.heads, d.language.prefix).eval()
    model.requires_grad_(False)
    width = d.classifier.hidden[-1]  # the classifier's picture vector
    adapter = Adapter(width, d.language.width, d.adapter.tokens[0], model.null, "random")
    vectors = torch.randn(n, width)
    with torch.no_grad():
        prefix = adapter(vectors)
    if greedy(model, prefix) != recomputed(model, prefix):
        raise SystemExit("error: greedy with the cache writes other captions than recomputing the sequence")
    old = timed(lambda: recomputed(model, prefix), reps)
    new = timed(lambda: greedy(model, prefix), reps)

    sentences, labels = captions(), torch.randint(0, 10, (d.data.train,))
    optimizer = torch.optim.Adam(adapter.parameters(), lr=d.adapter.lr)
    batches = 3 if args.quick else d.data.train // d.adapter.batch_size

    def steps():
        for i in range(batches):
            b = slice(i * d.adapter.batch_size, (i + 1) * d.adapter.batch_size)
            loss = sentence_loss(model, sentences[labels[b]], adapter(torch.randn(d.adapter.batch_size, width)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    train = timed(steps, reps)
    rows = [row(f"digits: greedy captions of {n:,} test digits, s", "cached s", new, "recomputed s", old),
            row(f"digits: an adapter epoch ({batches} steps) + its captions, s", "cached s", train + new,
                "recomputed s", train + old)]
    return rows, {"test_digits": n, "epoch_steps": batches, "language": {"width": d.language.width,
                                                                         "layers": d.language.layers}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.bench digits", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="write the rows here (JSON), e.g. bench/digits-cpu-2core.json")
    ap.add_argument("--quick", action="store_true", help="100 digits and 3 training steps, one repeat")
    ap.add_argument("--reps", type=int, default=3, help="timed calls of each (default 3)")
    args = ap.parse_args(argv)
    args.device = "cpu"  # the digits study runs on the CPU
    run_and_save("digits", args, run, "quick" if args.quick else f"full, {args.reps} calls each")


if __name__ == "__main__":
    main()
