"""What other studies read of the retrieval study, and nothing else: a trained text tower with its picture
projection as a joint image-text space (the one-token study scores its captions of the shapes pictures in it), and
the vision model's own text tower (CLIP's, SigLIP's).

The study reads its own params (the `retrieval:` section) from the params file it is given, so a caller needs
none of them. Everything else is defined in retrieval.data, retrieval.training, retrieval.params and
retrieval.paths; the only code of its own is loading a trained run's weights back into its tower and projection.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from frozenbridge.core.backbones import load_language
from frozenbridge.core.precision import use_bf16
from frozenbridge.core.saved_module import read_weights
from frozenbridge.retrieval.data.text_cache import VisionTextTower, has_text_tower, lm_batches
from frozenbridge.retrieval.params import Params
from frozenbridge.retrieval.paths import RUNS, run_dir
from frozenbridge.retrieval.training.towers import FeatureTower, ImageProjection

__all__ = ["TrainedSpace", "VisionTextTower", "has_text_tower", "trained_space", "trained_towers"]


@dataclass
class TrainedSpace:
    """A trained run's two sides: pictures (their grid-averaged features) and texts into the shared space."""
    project: Callable[[torch.Tensor], torch.Tensor]  # (pictures, encoder width) -> (pictures, dim)
    embed: Callable[[list[str]], torch.Tensor]  # texts -> (texts, dim), through the frozen LM then the tower


def trained_towers(params_file: Path) -> tuple[str, ...]:
    """The text towers the retrieval study trains under this params file (retrieval.towers)."""
    return Params.load(params_file).retrieval.towers


def trained_space(params_file: Path, tower: str, replicate: int, device: torch.device,
                  runs: Path = RUNS) -> TrainedSpace:
    """The retrieval run of `tower` (adaptor or linear: a tower that embeds any text) and `replicate`, rebuilt from
    its saved weights, with the frozen language model embedding texts as the embed stage did (retrieval.text pool,
    batch size, precision)."""
    params = Params.load(params_file)
    state = read_weights(run_dir(tower, replicate, runs), "run `dvc repro retrieval_train` first")
    r = params.retrieval
    image = ImageProjection(torch.zeros(2, state["image"]["proj.weight"].shape[1]), r.dim)
    image.load_state_dict(state["image"])
    lm = load_language(params.language.name)
    bf16 = use_bf16(r.text.precision, device)  # as the retrieval study embedded its captions
    text_tower = FeatureTower(torch.zeros(2, lm.width), torch.arange(2), r.dim,
                              r.adaptor.hidden if tower == "adaptor" else None)
    text_tower.load_state_dict(state["tower"])

    @torch.no_grad()
    def project(grid_means: torch.Tensor) -> torch.Tensor:
        return image(grid_means)

    @torch.no_grad()
    def embed(texts: list[str]) -> torch.Tensor:
        raw = torch.cat([v[:, 0] for _, v, _ in lm_batches(lm, texts, r.text.pool, r.text.batch_size, device, bf16)])
        return text_tower.net(text_tower.standardize(raw))

    return TrainedSpace(project, embed)
