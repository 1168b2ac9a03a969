"""One adapter run of the digits study, from saved frozen models and cached vectors to its folder of results."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import load_feature_tensor
from frozenbridge.core.saved_module import load_module, read_config, weights_digest, write_module
from frozenbridge.core.seeds import seed_int, seed_sequence
from frozenbridge.digits.data import mnist
from frozenbridge.digits.data.sentences import captions
from frozenbridge.digits.params import ADAPTER_STREAM, STUDY_STREAM, Params
from frozenbridge.digits.paths import CLASSIFIER, FEATURES, LANGUAGE, PICTURES
from frozenbridge.digits.training import charlm
from frozenbridge.digits.training.adapter import Adapter
from frozenbridge.digits.training.loop import caption_all, train_adapter

log = logging.getLogger("frozenbridge.digits")


def load_vectors(split: str, classifier_digest: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(vectors (n, width) float32, labels (n,)) of a split, refusing vectors another classifier made."""
    path = FEATURES / f"{split}.parquet"
    ids, feats, meta = load_feature_tensor(path, "digits_vision")
    if meta.get("encoder") != "digits-classifier" or meta.get("revision") != classifier_digest:
        raise FrozenbridgeError(f"{path}: vectors of {meta.get('encoder')} {meta.get('revision')}, not of the saved "
                                f"classifier {classifier_digest}; rerun `dvc repro digits_vision`")
    digits = mnist.read(PICTURES / f"{split}.parquet")
    if not np.array_equal(ids, digits.ids):
        raise FrozenbridgeError(f"{path}: its pictures are not those of {PICTURES / split}.parquet; rerun "
                                "`dvc repro digits_vision`")
    return feats.float().squeeze(1), torch.from_numpy(digits.labels)


def train_run(params: Params, tokens: int, replicate: int, out: Path) -> dict:
    a = params.digits.adapter
    language, _ = load_module(LANGUAGE, charlm.build, "digits_language")
    classifier_digest = read_config(CLASSIFIER, "run `dvc repro digits_vision` first")["weights_digest"]
    train, test = load_vectors("train", classifier_digest), load_vectors("test", classifier_digest)
    seeds = seed_sequence(seed_int(params.seed, STUDY_STREAM, ADAPTER_STREAM, replicate)).generate_state(2)
    torch.manual_seed(int(seeds[0]))  # the adapter's initial weights
    adapter = Adapter(train[0].shape[1], language.width, tokens, language.null, a.init)
    before = weights_digest(language)
    log.info("adapter %d token(s), replicate %d: %s trainable parameters; frozen language model %s", tokens,
             replicate, f"{adapter.trainable():,}", f"{sum(p.numel() for p in language.parameters()):,}")
    history = train_adapter(adapter, language, captions(), train, test, a.epochs, a.batch_size, a.lr, int(seeds[1]),
                            f"adapter {tokens} tok/{replicate}")
    unchanged = weights_digest(language) == before
    if not unchanged:
        raise FrozenbridgeError("the frozen language model's weights changed during adapter training")
    written = caption_all(adapter, language, test[0])
    result = {"tokens": tokens, "replicate": replicate, "init": a.init, "trainable": adapter.trainable(),
              "accuracy": history[-1]["accuracy"], "before": history[0], "history": history,
              "language_unchanged": unchanged, "classifier": classifier_digest}
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        write_module(tmp, adapter.state_dict(), {"inputs": train[0].shape[1], "width": language.width,
                                                 "tokens": tokens, "init": a.init})
        write_json(tmp / "result.json", result)
        write_json(tmp / "captions.json", [{"label": int(y), "caption": c} for y, c in zip(test[1], written)])
    log.info("adapter %d token(s), replicate %d: %.4f of test captions name the right digit", tokens, replicate,
             result["accuracy"])
    return result
