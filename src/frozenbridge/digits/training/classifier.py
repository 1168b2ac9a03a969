"""The vision side: a small digit classifier trained here; its last hidden layer is the picture's vector.

Once trained it is frozen and every picture's vector goes once into the Parquet feature cache, in the same format
and with the same metadata as the shapes study's encoder features, so the adapter never runs the classifier.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from frozenbridge.core.seeds import generator


class Classifier(nn.Module):
    def __init__(self, hidden: tuple[int, ...], inputs: int = 784, classes: int = 10):
        super().__init__()
        layers: list[nn.Module] = []
        last = inputs
        for width in hidden:
            layers += [nn.Linear(last, width), nn.ReLU()]
            last = width
        self.trunk = nn.Sequential(*layers)
        self.head = nn.Linear(last, classes)
        self.width = last

    def vector(self, pixels: torch.Tensor) -> torch.Tensor:
        """(n, 784) -> (n, width): the picture's vector, what the adapter reads."""
        return self.trunk(pixels)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(pixels))


def build(config: dict) -> Classifier:
    return Classifier(tuple(config["hidden"]))


def train_classifier(model: Classifier, x: torch.Tensor, y: torch.Tensor, epochs: int, batch_size: int, lr: float,
                     seed: int, x_test: torch.Tensor, y_test: torch.Tensor) -> list[dict]:
    """Adam on cross-entropy over shuffled full batches; test accuracy after every epoch."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    order = generator(seed)
    history = []
    for epoch in tqdm(range(1, epochs + 1), desc="digit classifier", unit="epoch"):
        model.train()
        perm = torch.randperm(len(x), generator=order)
        for i in range(0, len(perm) - batch_size + 1, batch_size):
            b = perm[i:i + batch_size]
            loss = nn.functional.cross_entropy(model(x[b]), y[b])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        history.append({"epoch": epoch, "loss": round(loss.item(), 6),
                        "test_accuracy": accuracy(model, x_test, y_test)})
    model.zero_grad(set_to_none=True)  # frozen from here on: no stale gradient either
    model.requires_grad_(False).eval()
    return history


@torch.no_grad()
def accuracy(model: Classifier, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    return round((model(x).argmax(1) == y).float().mean().item(), 6)


class ClassifierEncoder:
    """The frozen classifier as the feature cache sees an encoder: one pooled vector a picture."""

    grid = None
    name = "digits-classifier"

    def __init__(self, model: Classifier, revision: str):
        self.model, self.revision, self.width = model, revision, model.width

    def metadata(self) -> dict:
        return {"encoder": self.name, "revision": self.revision, "features": "pooled", "layer": None, "grid": None,
                "width": self.width, "output_shape": [self.width], "image_size": 28}

    @torch.inference_mode()
    def encode(self, pixels: np.ndarray) -> torch.Tensor:
        """(n, 784) floats -> (n, 1, width)."""
        return self.model.vector(torch.from_numpy(pixels)).unsqueeze(1)
