"""What a retrieval run reads: each split's pictures as one vector (the cached features averaged over the grid)
and its captions, plus the text cache(s) of the embed stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from frozenbridge.retrieval.data.text_cache import TextFeatures, read_text_features
from frozenbridge.retrieval.data.texts import SceneTexts, scene_texts
from frozenbridge.retrieval.paths import TEXT_FEATURES
from frozenbridge.shapes import interface as shapes


@dataclass
class SplitVectors:
    vectors: torch.Tensor  # (pictures, width): the encoder's features averaged over the grid
    texts: SceneTexts


def load_vectors(params, split: str, pictures: Path = shapes.PICTURES,
                 features: Path = shapes.FEATURES) -> SplitVectors:
    scenes, means = shapes.scenes_and_grid_means(split, params.vision, pictures, features)
    return SplitVectors(means, scene_texts(scenes, split, params.shapes.data.seed, params.shapes.data.held_out))


def load_study(params, pictures: Path = shapes.PICTURES,
               features: Path = shapes.FEATURES) -> tuple[SplitVectors, dict[str, SplitVectors]]:
    """(train, {test set name: its split}) as pooled vectors with their captions."""
    train = load_vectors(params, "train", pictures, features)
    return train, {name: load_vectors(params, split, pictures, features) for name, split in shapes.TEST_SPLITS.items()}


def load_text_cache(params, cache: str, folder: Path = TEXT_FEATURES) -> TextFeatures:
    if cache == "lm":
        return read_text_features(folder / "lm.parquet", params.language.name, f"text-{params.retrieval.text.pool}")
    return read_text_features(folder / "vision_text.parquet", params.vision.name, "text-tower")
