"""One replicate of the one-token study: the pooled vector -> MLP -> `prefix_tokens` tokens after the prompt, the
frozen language model writes the caption (the reference's order: "This is a picture of:" <picture> " caption").

The untrained connector writes the test captions first (the floor), then it trains on (picture, one of its
captions) pairs with the loss on the caption only, then writes them again, greedily. Writes the saved run (model/,
which the `frozenbridge` command line reads) and result.json: both sets of captions, exact matches against any of
the picture's captions, distinct captions, the loss curve (loss_end: the mean of the last 20 steps).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.bridge.model import VLM
from frozenbridge.bridge.saved_run import encoder_config, save_run
from frozenbridge.bridge.sequence import Interleaved
from frozenbridge.bridge.step import train_steps
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones import LanguageModel
from frozenbridge.core.precision import compile_cache, compile_choice, compile_layers
from frozenbridge.core.seeds import spawn
from frozenbridge.onetoken.data.features import PictureFeatures

log = logging.getLogger("frozenbridge.onetoken")
STUDY = 0x1707  # keeps this study's random streams apart from the others' for the same `seed`


def seeds(seed: int, replicate: int) -> dict[str, np.random.SeedSequence]:
    return spawn(("init", "batches"), seed, STUDY, replicate)


def item(prompt: str, picture: int, caption: str = "") -> Interleaved:
    """The prompt, then the picture's tokens, then (in training) the caption."""
    return Interleaved((prompt, picture), caption)


def caption_batches(data: PictureFeatures, prompt: str, size: int, seed: np.random.SeedSequence
                    ) -> Iterator[list[Interleaved]]:
    """Endless batches: the pictures in a fresh random order each epoch, each with one of its captions at random."""
    rng = np.random.default_rng(seed)

    def pictures() -> Iterator[int]:
        while True:
            yield from rng.permutation(len(data)).tolist()

    stream = pictures()
    while True:
        picked = [next(stream) for _ in range(size)]
        yield [item(prompt, p, data.captions[p][int(rng.integers(len(data.captions[p])))]) for p in picked]


def write_captions(vlm: VLM, data: PictureFeatures, prompt: str, n: int, batch_size: int, max_new: int) -> list[str]:
    out = []
    for start in range(0, n, batch_size):
        rows = range(start, min(n, start + batch_size))
        out += vlm.generate([item(prompt, r) for r in rows], data.feats, max_new)
    return out


def caption_scores(written: list[str], data: PictureFeatures) -> dict:
    """Exact matches against any of a picture's captions (by test set when the folder names one), distinct
    captions written."""
    hits = [w.strip() in {c.strip() for c in data.captions[i]} for i, w in enumerate(written)]
    sets = sorted({e.get("set") for e in data.extra[:len(written)] if e.get("set")})
    out = {"pictures": len(written), "exact": round(100 * float(np.mean(hits)), 2), "distinct": len(set(written)),
           "by_set": {}}
    for s in sets:
        mine = [h for h, e in zip(hits, data.extra) if e.get("set") == s]
        out["by_set"][s] = {"pictures": len(mine), "exact": round(100 * float(np.mean(mine)), 2)}
    return out


def train_run(params, replicate: int, train: PictureFeatures, test: PictureFeatures, lm: LanguageModel,
              device: torch.device, bf16: bool, out: Path) -> dict:
    o = params.onetoken
    s = seeds(params.seed, replicate)
    torch.manual_seed(int(s["init"].generate_state(1)[0]))
    connector = MergedPatchMLP([train.feats.shape[-1]], lm.width, hidden=o.hidden, prefix_tokens=o.prefix_tokens)
    vlm = VLM(lm, connector.to(device), device, bf16)
    log.info("%s", connector.describe())
    n = len(test) if o.evaluate.pictures is None else min(o.evaluate.pictures, len(test))
    if o.evaluate.pictures is not None and o.evaluate.pictures > len(test):
        log.warning("onetoken.evaluate.pictures=%d: the test set holds %d pictures; evaluating %d",
                    o.evaluate.pictures, len(test), n)
    ev = o.evaluate

    def captions() -> list[str]:
        connector.eval()
        with torch.compiler.set_stance("force_eager"):  # compiled layers are for the training steps
            written = write_captions(vlm, test, o.prompt, n, ev.batch_size, ev.caption_tokens)
        connector.train()
        return written

    floor = captions()
    compiled, why = compile_choice(o.train.compile, device)
    if compiled:
        log.info("onetoken/%d: %s: %d decoder layers compiled (the first step compiles them, or loads them from %s)",
                 replicate, why, compile_layers(lm.model), compile_cache())
    optimizer = torch.optim.AdamW(connector.parameters(), lr=o.train.lr)
    history: list[dict] = []

    def record(step: int, loss: float) -> None:
        history.append({"step": step, "loss": round(loss, 5)})

    train_steps(vlm, caption_batches(train, o.prompt, o.train.batch_size, s["batches"]), train.feats, optimizer,
                o.train.steps, f"onetoken/{replicate}", schedule=(o.train.schedule, o.train.warmup), after_step=record)
    trained = captions()
    loss_end = round(float(np.mean([h["loss"] for h in history[-20:]])), 5)
    result = {"replicate": replicate, "seed": params.seed, "trainable": connector.n_params,
              "prefix_tokens": connector.n_out, "loss_end": loss_end, "compiled_layers": compiled,
              "history": history, "scores": {"floor": caption_scores(floor, test), "trained":
                                             caption_scores(trained, test)},
              "captions": [{"file_name": Path(test.files[i]).name, "truth": test.captions[i], "floor": floor[i],
                            "trained": trained[i]} for i in range(n)]}
    log.info("onetoken/%d: loss %.3f, exact %.1f%% (untrained %.1f%%), %d distinct captions of %d", replicate,
             result["loss_end"], result["scores"]["trained"]["exact"], result["scores"]["floor"]["exact"],
             result["scores"]["trained"]["distinct"], n)
    with atomic_path(out) as tmp:
        (tmp / "model").mkdir(parents=True)
        save_run(tmp / "model", connector.cpu(), encoder_config(train.meta), lm,
                 captioning={"prompt": o.prompt, "picture": "after_prompt"})
        write_json(tmp / "result.json", result)
    return result
