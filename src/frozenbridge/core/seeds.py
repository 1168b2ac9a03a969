"""Every random number of a study derives from params.yaml `seed` along a path of integers, one way for all studies:
a study names its own stream (a constant that keeps its numbers apart from the other studies' for the same `seed`),
then the part and the replicate. Same path, same numbers, on every machine.

    seed_sequence(seed, replicate).spawn(...)      numpy's SeedSequence of the path: spawn it for independent streams
    seed_int(seed, STUDY, part, replicate)         one 32-bit integer, for torch.manual_seed or a torch.Generator
    rng(seed, STUDY, replicate)                    a numpy Generator drawing from the path
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch


def seed_sequence(*path: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(list(path))


def spawn(names: tuple[str, ...], *path: int) -> dict[str, np.random.SeedSequence]:
    """Independent streams, one per name, from the path (changing one stream's use never moves another's)."""
    return dict(zip(names, seed_sequence(*path).spawn(len(names))))


def seed_int(*path: int) -> int:
    """A 32-bit integer seed from the path."""
    return int(seed_sequence(*path).generate_state(1)[0])


def rng(*path: int) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(*path))


def generator(value: int) -> "torch.Generator":
    """A torch Generator started at `value` (a seed_int), for draws that must not touch torch's global state."""
    import torch  # only here: the data stages derive their seeds without torch

    return torch.Generator().manual_seed(value)
