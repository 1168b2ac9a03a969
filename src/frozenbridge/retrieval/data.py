"""What a retrieval run reads: each split's pictures as one vector (the cached features averaged over the grid)
and its captions, plus the text cache(s) of the embed stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from frozenbridge.retrieval.paths import TEXT_FEATURES
from frozenbridge.retrieval.text_cache import TextFeatures, read_text_features
from frozenbridge.retrieval.texts import SceneTexts, scene_texts
from frozenbridge.shapes.rundata import load_split
from frozenbridge.shapes.vocab import TEST_SPLITS


@dataclass
class SplitVectors:
    vectors: torch.Tensor  # (pictures, width): the encoder's features averaged over the grid
    texts: SceneTexts


def load_vectors(params, split: str, shapes_dir: Path = Path("data/shapes"),
                 features_dir: Path = Path("data/features")) -> SplitVectors:
    data = load_split(split, shapes_dir, features_dir, params.vision)
    texts = scene_texts(data.shapes, split, params.data.seed, params.data.held_out)
    return SplitVectors(data.feats.float().mean(1), texts)


def load_study(params, shapes_dir: Path = Path("data/shapes"),
               features_dir: Path = Path("data/features")) -> tuple[SplitVectors, dict[str, SplitVectors]]:
    """(train, {test set name: its split}) as pooled vectors with their captions."""
    train = load_vectors(params, "train", shapes_dir, features_dir)
    return train, {name: load_vectors(params, split, shapes_dir, features_dir) for name, split in TEST_SPLITS.items()}


def load_text_cache(params, cache: str, folder: Path = TEXT_FEATURES) -> TextFeatures:
    if cache == "lm":
        return read_text_features(folder / "lm.parquet", params.language.name, f"text-{params.retrieval.text.pool}")
    return read_text_features(folder / "vision_text.parquet", params.vision.name, "text-tower")
