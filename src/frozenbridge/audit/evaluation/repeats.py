"""Test pictures that repeat a training picture: the same file (its bytes) or the same features (a copy saved under
another name or format that the frozen encoder turns into the same numbers). An answer about such a picture can be
remembered from training rather than read, so the page says so before any score: a copied picture passed unflagged
before issue 69.
"""

from __future__ import annotations

import hashlib

import torch

from frozenbridge.audit.data.folder import AuditFolder


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def feature_digests(feats: torch.Tensor) -> list[str]:
    """One digest a row of the features (pictures, tokens, width), of its stored numbers."""
    return [digest(row.contiguous().view(torch.uint8).numpy().tobytes()) for row in feats.cpu()]


def repeats(folder: AuditFolder, train_feats: torch.Tensor, test_feats: torch.Tensor) -> list[dict]:
    """Every test picture that repeats a training picture, in test order: {"test", "train" (the first such training
    file), "same": "file" (the same bytes) or "features" (other bytes, the same features)}."""
    files: dict[str, str] = {}
    for p in folder.train.pictures:
        files.setdefault(digest(p.path.read_bytes()), p.file_name)
    feats: dict[str, str] = {}
    for p, d in zip(folder.train.pictures, feature_digests(train_feats), strict=True):
        feats.setdefault(d, p.file_name)
    out = []
    for p, d in zip(folder.test.pictures, feature_digests(test_feats), strict=True):
        if (same := files.get(digest(p.path.read_bytes()))) is not None:
            out.append({"test": p.file_name, "train": same, "same": "file"})
        elif (same := feats.get(d)) is not None:
            out.append({"test": p.file_name, "train": same, "same": "features"})
    return out
