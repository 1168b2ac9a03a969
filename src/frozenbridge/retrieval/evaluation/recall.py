"""Recall@K from a similarity matrix: matched pairs on its diagonal, or a mask of which candidates are right for
which query (several may be: any picture with a red circle is right for "a red circle") (torch-free)."""

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


def relevant_ranks(similarity: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """For each query (row), how many wrong candidates score at least as high as its best right one (ties against)."""
    s, rel = np.asarray(similarity, dtype=np.float64), np.asarray(relevant, dtype=bool)
    if s.shape != rel.shape:
        raise ValueError(f"similarity {s.shape} and relevance {rel.shape} differ in shape")
    if not rel.any(1).all():
        raise ValueError("every query needs at least one right candidate")
    best = np.where(rel, s, -np.inf).max(1, keepdims=True)
    return ((s >= best) & ~rel).sum(1)


def recall_relevant(similarity: np.ndarray, relevant: np.ndarray, ks: tuple[int, ...] = (1, 5)) -> dict[str, float]:
    """{'R@1': .., 'R@5': ..}: the share of queries with a right candidate among their top K."""
    r = relevant_ranks(similarity, relevant)
    return {f"R@{k}": round(float((r < k).mean()), 6) for k in ks}


def chance_recall(relevant: np.ndarray, ks: tuple[int, ...] = (1, 5)) -> dict[str, float]:
    """What a random ranking scores in expectation: a query with r right of m candidates misses its top K with
    probability C(m - r, K) / C(m, K)."""
    from math import comb

    rel = np.asarray(relevant, dtype=bool)
    m, right = rel.shape[1], rel.sum(1)
    return {f"R@{k}": round(float(np.mean([1 - comb(m - r, k) / comb(m, k) if k < m else 1.0 for r in right])), 6)
            for k in ks}
