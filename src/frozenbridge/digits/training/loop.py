"""Train one adapter between the frozen classifier's cached vectors and the frozen character model, captioning the
test digits after every epoch (epoch 0 = before any training)."""

from __future__ import annotations

import torch
from tqdm import tqdm

from frozenbridge.core.seeds import generator
from frozenbridge.digits.evaluation.scoring import greedy, score
from frozenbridge.digits.training.adapter import Adapter
from frozenbridge.digits.training.charlm import CharLM, sentence_loss


def train_adapter(adapter: Adapter, language: CharLM, sentences: torch.Tensor, train: tuple, test: tuple,
                  epochs: int, batch_size: int, lr: float, seed: int, desc: str) -> list[dict]:
    """`train` and `test` are (vectors (n, inputs), labels (n,)); `sentences` the (10, length) captions by digit.
    Only the adapter has an optimizer; the frozen model's parameters never get a gradient."""
    x, y = train
    x_test, y_test = test
    optimizer = torch.optim.Adam(adapter.parameters(), lr=lr)
    order = generator(seed)
    history = [{"epoch": 0, "loss": None, **evaluate(adapter, language, x_test, y_test)}]
    for epoch in tqdm(range(1, epochs + 1), desc=desc, unit="epoch"):
        adapter.train()
        perm = torch.randperm(len(x), generator=order)
        total, batches = 0.0, 0
        for i in range(0, len(perm) - batch_size + 1, batch_size):
            b = perm[i:i + batch_size]
            loss = sentence_loss(language, sentences[y[b]], adapter(x[b]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        history.append({"epoch": epoch, "loss": round(total / max(batches, 1), 6),
                        **evaluate(adapter, language, x_test, y_test)})
    adapter.eval()
    return history


@torch.no_grad()
def evaluate(adapter: Adapter, language: CharLM, x: torch.Tensor, y: torch.Tensor) -> dict:
    adapter.eval()
    captions = greedy(language, adapter(x))
    return score(captions, y.tolist())


@torch.no_grad()
def caption_all(adapter: Adapter, language: CharLM, x: torch.Tensor) -> list[str]:
    adapter.eval()
    return greedy(language, adapter(x))
