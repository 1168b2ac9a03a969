"""The digits study's parts: real MNIST pictures, a classifier far above chance, a character LM that writes its
sentences, an adapter that is the only thing that moves, and runs that repeat exactly for a seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.saved_module import weights_digest
from frozenbridge.digits.data import mnist
from frozenbridge.digits.data.sentences import BOS, EOS, LENGTH, WORDS, captions, decode, digit_named, encode, sentence, well_formed
from frozenbridge.digits.evaluation.scoring import greedy, score
from frozenbridge.digits.params import load_params
from frozenbridge.digits.training.adapter import Adapter
from frozenbridge.digits.training.charlm import CharLM, train_language
from frozenbridge.digits.training.classifier import Classifier, accuracy, train_classifier
from frozenbridge.digits.training.loop import train_adapter


@pytest.fixture(scope="module")
def split():
    return mnist.split(mnist.load_sample(), 1200, 400, seed=0)


@pytest.fixture(scope="module")
def classifier(split):
    torch.manual_seed(0)
    model = Classifier((64, 32))
    x, y = torch.from_numpy(split["train"].floats()), torch.from_numpy(split["train"].labels)
    xt, yt = torch.from_numpy(split["test"].floats()), torch.from_numpy(split["test"].labels)
    history = train_classifier(model, x, y, 4, 64, 2e-3, 0, xt, yt)
    return model, history


@pytest.fixture(scope="module")
def language():
    """A small character LM, trained enough to write its sentences (not to the study's final loss)."""
    torch.manual_seed(1)
    model = CharLM(width=32, layers=1, heads=2, prefix=4)
    losses = train_language(model, captions(), steps=300, batch_size=64, lr=5e-3, seed=1)
    return model, losses


def vectors(model, digits, n):
    with torch.no_grad():
        return model.vector(torch.from_numpy(digits.floats()[:n])), torch.from_numpy(digits.labels[:n])


def test_the_mnist_sample_is_real_and_split_by_seed(split):
    sample = mnist.load_sample()
    assert sample.pixels.shape == (5000, 28, 28) and np.bincount(sample.labels).tolist() == [500] * 10
    assert sample.pixels.max() == 255 and (sample.pixels == 0).mean() > 0.5  # ink on a black ground
    again = mnist.split(sample, 1200, 400, seed=0)
    assert np.array_equal(again["test"].ids, split["test"].ids)
    assert not np.array_equal(mnist.split(sample, 1200, 400, seed=1)["test"].ids, split["test"].ids)
    assert not set(split["train"].ids) & set(split["test"].ids)


def test_a_split_survives_parquet(split, tmp_path):
    mnist.write(split["test"], tmp_path / "test.parquet")
    back = mnist.read(tmp_path / "test.parquet")
    assert np.array_equal(back.pixels, split["test"].pixels) and np.array_equal(back.labels, split["test"].labels)


def test_the_classifier_beats_chance_by_far(classifier, split):
    model, history = classifier
    assert history[-1]["test_accuracy"] > 0.75  # chance is 0.1
    assert history[-1]["test_accuracy"] > history[0]["test_accuracy"] - 0.05
    assert not any(p.requires_grad for p in model.parameters())  # frozen after training


def test_sentences_encode_decode_and_score():
    ids = encode(sentence(7))
    assert decode(ids) == "the digit is seven" and well_formed(decode(ids)) and digit_named(decode(ids)) == 7
    assert not well_formed("the digit is fo") and digit_named("the digit is fo") is None
    assert captions().shape == (10, max(len(encode(sentence(d))) for d in range(10)))
    s = score(["the digit is one", "the digit is one", "the digit is tw"], [1, 2, 2])
    assert s["accuracy"] == pytest.approx(1 / 3) and s["well_formed"] == pytest.approx(2 / 3) and s["distinct"] == 2


def test_the_language_model_writes_its_sentence_with_the_null_in_front(language):
    model, losses = language
    assert losses[-1] < losses[0] / 5
    written = greedy(model, model.null.detach().expand(3, -1, -1))
    assert all(well_formed(w) for w in written)


def test_greedy_with_the_cache_writes_what_recomputing_the_sequence_writes():
    """CharLM.extend over cached keys and values gives the stack's own logits at every position, and greedy (which
    uses it) writes the captions of running the whole sequence through the model each step. Untrained weights and
    random prefixes: the captions run to full length, through every step, none of them a sentence."""
    torch.manual_seed(5)
    model = CharLM(width=32, layers=2, heads=4, prefix=3).eval()
    prefix = torch.randn(40, 3, 32)
    tokens = torch.randint(2, 10, (40, 7))
    with torch.no_grad():
        whole = model(tokens, prefix)
        h = torch.cat([prefix, model.embed(tokens[:, :2])], dim=1) + model.positions[:, :5]
        h, cache = model.extend(h, None)  # the prefix and two characters at once, then one character a call
        steps = [model.out(h[:, 3:])]
        for i in range(2, 7):
            h, cache = model.extend(model.embed(tokens[:, i:i + 1]) + model.positions[:, 3 + i:4 + i], cache)
            steps.append(model.out(h))
    assert torch.allclose(torch.cat(steps, dim=1), whole, atol=1e-5)

    with torch.no_grad():  # greedy as the study first wrote it: the whole sequence again for each character
        ids = torch.full((40, 1), BOS)
        for _ in range(LENGTH - 1):
            ids = torch.cat([ids, model(ids, prefix)[:, -1].argmax(-1, keepdim=True)], dim=1)
    recomputed = [decode(row) for row in ids.tolist()]
    assert greedy(model, prefix) == recomputed
    assert not any(well_formed(c) for c in recomputed) and (ids == EOS).sum() < 40 * LENGTH // 2


def test_fluency_comes_free_before_any_adapter_training(language, classifier, split):
    """An adapter that starts at the null: every caption is one of the ten sentences, and the same for every picture
    (the picture is not read yet). A random start does not give that guarantee."""
    lm, _ = language
    x, y = vectors(classifier[0], split["test"], 200)
    adapter = Adapter(x.shape[1], lm.width, 4, lm.null, "learned_null")
    before = score(greedy(lm, adapter(x)), y.tolist())
    assert before["well_formed"] == 1.0 and before["distinct"] == 1
    assert before["accuracy"] < 0.2


def test_only_the_adapter_moves_and_it_learns(language, classifier, split):
    lm, _ = language
    model = classifier[0]
    frozen = (weights_digest(lm), weights_digest(model))
    train = vectors(model, split["train"], 1200)
    test = vectors(model, split["test"], 200)
    torch.manual_seed(3)
    adapter = Adapter(train[0].shape[1], lm.width, 4, lm.null, "learned_null")
    start = weights_digest(adapter)
    history = train_adapter(adapter, lm, captions(), train, test, epochs=3, batch_size=64, lr=3e-3, seed=3, desc="t")
    assert (weights_digest(lm), weights_digest(model)) == frozen
    assert all(p.grad is None for p in lm.parameters())
    assert weights_digest(adapter) != start
    assert history[-1]["accuracy"] > 2 * history[0]["accuracy"]


def test_an_adapter_run_repeats_exactly_for_a_seed(language, classifier, split):
    lm, _ = language
    train = vectors(classifier[0], split["train"], 300)
    test = vectors(classifier[0], split["test"], 100)

    def run(seed):
        torch.manual_seed(seed)
        adapter = Adapter(train[0].shape[1], lm.width, 2, lm.null, "random")
        history = train_adapter(adapter, lm, captions(), train, test, epochs=2, batch_size=32, lr=3e-3, seed=seed,
                                desc="t")
        return history, weights_digest(adapter)

    first = run(5)
    assert run(5) == first
    assert run(6)[1] != first[1]


def test_one_token_fills_one_slot_and_the_rest_keep_the_null(language):
    lm, _ = language
    adapter = Adapter(8, lm.width, 1, lm.null, "random")
    out = adapter(torch.randn(3, 8))
    assert out.shape == (3, lm.prefix, lm.width)
    assert torch.equal(out[:, 1:], lm.null.detach().expand(3, -1, -1)[:, 1:])
    assert adapter.trainable() == 8 * 8 + 8 + 8 * lm.width + lm.width


def test_digits_params_refuse_what_cannot_run(tmp_path):
    def load(section):
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump({"digits": section}))
        return load_params(path)

    assert load({}).digits.adapter.tokens == (8, 1)
    with pytest.raises(FrozenbridgeError, match=r"digits.adapter.tokens\[0\] = 9 is not allowed; expected at most "
                                                r"digits.language.prefix = 8"):
        load({"adapter": {"tokens": [9]}})
    with pytest.raises(FrozenbridgeError, match="digits.data.train = 4500 is not allowed; expected train \\+ test at "
                                                "most 5000"):
        load({"data": {"train": 4500, "test": 1000}})
    with pytest.raises(FrozenbridgeError, match="digits.language.heads = 5 is not allowed; expected a divisor"):
        load({"language": {"heads": 5}})
    with pytest.raises(FrozenbridgeError, match="unknown key digits.adapter.token;"):
        load({"adapter": {"token": [1]}})
    with pytest.raises(FrozenbridgeError, match="digits.classifier.hidden = \\[\\] is not allowed"):
        load({"classifier": {"hidden": []}})


def test_classifier_accuracy_is_what_it_says(classifier, split):
    model = classifier[0]
    x, y = torch.from_numpy(split["test"].floats()), torch.from_numpy(split["test"].labels)
    with torch.no_grad():
        by_hand = float((model(x).argmax(1) == y).float().mean())
    assert accuracy(model, x, y) == pytest.approx(by_hand)
    assert WORDS[3] == "three"
