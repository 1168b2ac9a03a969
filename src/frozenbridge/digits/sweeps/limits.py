"""What limits the digits study's adapter: one factor at a time from the default params, every replicate trained with
the library's own functions (CharLM + train_language, Adapter + train_adapter, greedy captions and their score).

Factors: the character LM's seed (the seed `dvc exp run -S seed=s` would give the LM, the classifier and the adapters
kept at the default), its training steps, the adapter's hidden width, epochs and lr, and an oracle whose input is the
true digit as a one-hot vector (padded to the vector's width) instead of the classifier's vector: the LM-side
ceiling. Beside them, the ceilings of the vector itself (the classifier's head, a fresh linear probe, an MLP probe of
the adapter's first-layer shape) and, per digit, the pictures the adapter gets wrong while the classifier is right.

Run from the repository root after `dvc repro digits_summarize` (it reads data/digits and runs/digits):

    python -m frozenbridge.digits.sweeps.limits [--only default,oracle] [--threads 1]

Results merge by setting name into results/digits-limits/limits.json (experiment.json beside); trained LMs are kept
in runs/digits-limits/ so a rerun does not retrain them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import torch
from torch import nn

from frozenbridge.core.atomic import write_json
from frozenbridge.core.saved_module import load_module, read_config, save_module
from frozenbridge.core.seeds import generator, seed_int, seed_sequence
from frozenbridge.digits.data.sentences import captions, digit_named
from frozenbridge.digits.evaluation.scoring import score
from frozenbridge.digits.params import ADAPTER_STREAM, LANGUAGE_STREAM, STUDY_STREAM, load_params
from frozenbridge.digits.paths import CLASSIFIER, LANGUAGE
from frozenbridge.digits.training import charlm, classifier
from frozenbridge.digits.training.adapter import Adapter
from frozenbridge.digits.training.loop import caption_all, evaluate, train_adapter
from frozenbridge.digits.training.run import load_vectors

OUT, LM_CACHE = Path("results/digits-limits"), Path("runs/digits-limits/language")
CURVE_PICTURES = 200  # per-epoch accuracy on the first test pictures only; the final score uses all of them
SETTINGS = {  # name: (factor, change from the default params); the last two check the proposal on other LM seeds
    "default": ("none", {}), "lm_seed_1": ("lm_seed", {"lm_seed": 1}), "lm_seed_2": ("lm_seed", {"lm_seed": 2}),
    "lm_steps_half": ("lm_steps", {"lm_steps": 0.5}), "lm_steps_2x": ("lm_steps", {"lm_steps": 2}),
    "lm_steps_4x": ("lm_steps", {"lm_steps": 4}), "epochs_2x": ("epochs", {"epochs": 2}),
    "epochs_4x": ("epochs", {"epochs": 4}), "hidden_256": ("capacity", {"hidden": 256}),
    "lr_3x": ("lr", {"lr": 3}), "init_random": ("init", {"init": 1}), "oracle": ("vector", {"oracle": True}),
    "lm_steps_half_seed_1": ("proposal", {"lm_steps": 0.5, "lm_seed": 1}),
    "lm_steps_half_seed_2": ("proposal", {"lm_steps": 0.5, "lm_seed": 2}),
}


def language_model(params, lm_seed: int, steps: int) -> charlm.CharLM:
    """The pipeline's LM for the default seed and steps, else one trained as stages/digits/language.py does."""
    lang = params.digits.language
    if lm_seed == params.seed and steps == lang.steps:
        return load_module(LANGUAGE, charlm.build, "digits_language")[0]
    folder = LM_CACHE / f"seed{lm_seed}-steps{steps}"
    if (folder / "weights.pt").exists():
        return load_module(folder, charlm.build, "limits")[0]
    seed = seed_int(lm_seed, STUDY_STREAM, LANGUAGE_STREAM)
    torch.manual_seed(seed)
    model = charlm.CharLM(lang.width, lang.layers, lang.heads, lang.prefix)
    charlm.train_language(model, captions(), steps, lang.batch_size, lang.lr, seed)
    save_module(folder, model, {"width": lang.width, "layers": lang.layers, "heads": lang.heads, "prefix": lang.prefix})
    return model


def make_adapter(inputs: int, language: charlm.CharLM, tokens: int, init: str, hidden: int) -> Adapter:
    """The study's Adapter; a hidden width other than `inputs` swaps in a wider net, initialised the same way."""
    adapter = Adapter(inputs, language.width, tokens, language.null, init)
    if hidden != inputs:
        last = nn.Linear(hidden, tokens * language.width)
        if init == "learned_null":
            with torch.no_grad():
                last.weight.zero_()
                last.bias.copy_(adapter.net[2].bias)
        adapter.net = nn.Sequential(nn.Linear(inputs, hidden), nn.GELU(), last)
    return adapter


def per_digit(written: list[str], labels: torch.Tensor, predicted: torch.Tensor) -> dict:
    named = [digit_named(c) for c in written]
    right = torch.tensor([n == y for n, y in zip(named, labels.tolist(), strict=True)])
    head_right = predicted == labels
    lost = [(y, n) for n, y, ok, p in zip(named, labels.tolist(), right.tolist(), head_right.tolist(), strict=True)
            if p and not ok]  # the classifier's head is right, the caption is not
    return {"accuracy": [round(right[labels == d].float().mean().item(), 4) for d in range(10)],
            "wrong_where_classifier_right": len(lost), "right_where_classifier_wrong": int((right & ~head_right).sum()),
            "lost_pairs": [[y, n, k] for (y, n), k in Counter(lost).most_common(8)]}


def run_setting(name: str, params, vectors: dict, predicted: torch.Tensor, ceiling: float) -> dict:
    factor, change = SETTINGS[name]
    a, lang = params.digits.adapter, params.digits.language
    cfg = {"lm_seed": change.get("lm_seed", params.seed), "lm_steps": int(lang.steps * change.get("lm_steps", 1)),
           "tokens": max(a.tokens), "epochs": a.epochs * change.get("epochs", 1), "lr": a.lr * change.get("lr", 1),
           "init": "random" if change.get("init") else a.init, "hidden": change.get("hidden", 64),
           "input": "one-hot true digit" if change.get("oracle") else "classifier vector"}
    language = language_model(params, cfg["lm_seed"], cfg["lm_steps"])
    (x, y), (x_test, y_test) = vectors["train"], vectors["test"]
    if change.get("oracle"):
        x, x_test = (nn.functional.one_hot(t, x.shape[1]).float() for t in (y, y_test))
    reps = {}
    for r in params.replicates:
        start = time.perf_counter()
        seeds = seed_sequence(seed_int(params.seed, STUDY_STREAM, ADAPTER_STREAM, r)).generate_state(2)
        torch.manual_seed(int(seeds[0]))
        adapter = make_adapter(x.shape[1], language, cfg["tokens"], cfg["init"], cfg["hidden"])
        curve = (x_test[:CURVE_PICTURES], y_test[:CURVE_PICTURES])
        history = train_adapter(adapter, language, captions(), (x, y), curve, cfg["epochs"], a.batch_size, cfg["lr"],
                                int(seeds[1]), f"{name}/{r}")
        written = caption_all(adapter, language, x_test)
        final = score(written, y_test.tolist())
        rep = {"accuracy": final["accuracy"], "well_formed": final["well_formed"], "distinct": final["distinct"],
               "trainable": adapter.trainable(), "curve": [h["accuracy"] for h in history],
               "per_digit": per_digit(written, y_test, predicted)}
        if change.get("oracle"):  # the oracle adapter fed the classifier's predicted digit: the two ceilings composed
            onehot = nn.functional.one_hot(predicted, x.shape[1]).float()
            rep["fed_classifier_prediction"] = evaluate(adapter, language, onehot, y_test)["accuracy"]
        rep["seconds"] = round(time.perf_counter() - start, 1)
        reps[str(r)] = rep
        print(f"{name} replicate {r}: {rep['accuracy']:.4f} in {rep['seconds']} s", flush=True)
    acc = [v["accuracy"] for v in reps.values()]
    return {"factor": factor, "settings": cfg, "replicates": reps, "worst": min(acc), "best": max(acc),
            "share_of_ceiling_worst": round(min(acc) / ceiling, 4),
            "share_of_ceiling_best": round(max(acc) / ceiling, 4),
            "seconds": round(sum(v["seconds"] for v in reps.values()), 1)}


def probe(net: nn.Module, train: tuple, test: tuple, epochs: int, lr: float, seed: int) -> dict:
    """A classifier fit on the frozen vectors: how much digit the vector itself holds, for this probe's shape."""
    (x, y), (x_test, y_test) = train, test
    optimizer, order = torch.optim.Adam(net.parameters(), lr=lr), generator(seed)
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=order)
        for i in range(0, len(perm) - 127, 128):
            loss = nn.functional.cross_entropy(net(x[perm[i:i + 128]]), y[perm[i:i + 128]])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        return {"train": round((net(x).argmax(1) == y).float().mean().item(), 4),
                "test": round((net(x_test).argmax(1) == y_test).float().mean().item(), 4)}


def vector_ceilings(params, vectors: dict) -> tuple[dict, torch.Tensor]:
    head = load_module(CLASSIFIER, classifier.build, "digits_vision")[0].head
    (x, y), (x_test, y_test) = vectors["train"], vectors["test"]
    with torch.no_grad():
        predicted = head(x_test).argmax(1)
    seed = seed_int(params.seed, STUDY_STREAM, 99)
    torch.manual_seed(seed)
    linear, mlp = nn.Linear(64, 10), nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 10))
    out = {"vector": {"layer": "last hidden layer (after ReLU)", "hidden": list(params.digits.classifier.hidden),
                      "width": x.shape[1], "dead_units": int((x.max(0).values == 0).sum())},
           "head": {"test": round((predicted == y_test).float().mean().item(), 4),
                    "per_digit": [round((predicted[y_test == d] == d).float().mean().item(), 4) for d in range(10)]},
           "linear_probe": probe(linear, (x, y), (x_test, y_test), 100, 1e-2, seed),
           "mlp_probe_adapter_shape": probe(mlp, (x, y), (x_test, y_test), 24, 1e-3, seed)}
    return out, predicted


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.digits.sweeps.limits", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help=f"comma-separated settings (default: all): {', '.join(SETTINGS)}")
    ap.add_argument("--params", default="params.yaml", help="the params each setting changes (default params.yaml)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest for these tiny models)")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(SETTINGS)
    if unknown := [n for n in names if n not in SETTINGS]:
        ap.error(f"unknown settings {unknown}; known: {list(SETTINGS)}")
    torch.set_num_threads(args.threads)
    params = load_params(args.params)
    digest = read_config(CLASSIFIER, "run `dvc repro digits_vision` first")["weights_digest"]
    vectors = {s: load_vectors(s, digest) for s in ("train", "test")}
    ceilings, predicted = vector_ceilings(params, vectors)
    path = OUT / "limits.json"
    results = json.loads(path.read_text()) if path.exists() else {"settings": {}}
    results.update({"ceiling": ceilings["head"]["test"], "vector": ceilings, "threads": args.threads,
                    "replicates": list(params.replicates), "curve_pictures": CURVE_PICTURES})
    for name in names:
        results["settings"][name] = run_setting(name, params, vectors, predicted, results["ceiling"])
        write_json(path, results)
    command = " ".join(["python -m frozenbridge.digits.sweeps.limits", *sys.argv[1:]])
    old = json.loads((OUT / "experiment.json").read_text())["command"] if (OUT / "experiment.json").exists() else ""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    write_json(OUT / "experiment.json", {
        "name": "digits-limits", "command": f"{old} && {command}" if old else command, "commit": commit,
        "note": f"the digits study's default params with one factor changed at a time, {args.threads} torch "
                "thread(s), after `dvc repro digits_summarize`; settings: " + ", ".join(results["settings"])})


if __name__ == "__main__":
    main()
