"""Recall@K from a similarity matrix whose row i and column i are the matched pair (torch-free)."""

from __future__ import annotations

import numpy as np


def match_ranks(similarity: np.ndarray) -> np.ndarray:
    """For each row, how many other columns score at least as high as its own match (0 = the match alone first).

    A tie counts against the match, so a collapsed model (every score equal) ranks last, never first."""
    s = np.asarray(similarity, dtype=np.float64)
    own = np.diag(s)[:, None]
    others = ~np.eye(len(s), s.shape[1], dtype=bool)
    return ((s >= own) & others).sum(axis=1)


def recall_at(similarity: np.ndarray, ks: tuple[int, ...] = (1, 5)) -> dict[str, dict[str, float]]:
    """{'image_to_text': {'R@1': .., 'R@5': ..}, 'text_to_image': {...}} as fractions of queries."""
    s = np.asarray(similarity, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"a square similarity matrix (matched pairs on the diagonal), not shape {s.shape}")
    out = {}
    for name, m in (("image_to_text", s), ("text_to_image", s.T)):
        r = match_ranks(m)
        out[name] = {f"R@{k}": round(float((r < k).mean()), 6) for k in ks}
    return out
