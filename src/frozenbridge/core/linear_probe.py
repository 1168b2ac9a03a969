"""A linear probe: what a frozen representation says about a label, read by the simplest classifier that can."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch


def fit_linear_probe(x: np.ndarray, y: np.ndarray, classes: int, l2: float, iterations: int,
                     standardize: bool = False) -> Callable[[np.ndarray], np.ndarray]:
    """A multinomial logistic regression from x (examples, features) to class indices y: weights and bias from
    zeros, cross-entropy + l2 * ||W||^2, full-batch L-BFGS in float64. With `standardize`, each feature is first
    centred and scaled by the training examples' mean and spread (the same shift applies to what it predicts), so
    one l2 fits features of any scale. Returns predict(x) -> class indices."""
    mean, std = (x.mean(0), x.std(0) + 1e-6) if standardize else (0.0, 1.0)

    def inputs(z: np.ndarray) -> torch.Tensor:
        return torch.from_numpy((z - mean) / std if standardize else z).double()

    xt, yt = inputs(x), torch.from_numpy(y).long()
    w = torch.zeros(x.shape[1], classes, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(classes, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=iterations, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w + b, yt) + l2 * (w ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    w, b = w.detach(), b.detach()
    return lambda z: (inputs(z) @ w + b).argmax(1).numpy()
