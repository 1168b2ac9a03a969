"""Every random number of the digits study derives from params.yaml `seed`: one stream a part, one a replicate."""

from __future__ import annotations

import numpy as np
import torch

STUDY = 0xD161  # keeps the digits study's streams apart from the shapes study's for the same `seed`
CLASSIFIER, LANGUAGE, ADAPTER = 0, 1, 2


def stream(seed: int, *path: int) -> int:
    """A 32-bit seed for one part (and replicate) of the study."""
    return int(np.random.SeedSequence([seed, STUDY, *path]).generate_state(1)[0])


def generator(value: int) -> torch.Generator:
    return torch.Generator().manual_seed(value)
