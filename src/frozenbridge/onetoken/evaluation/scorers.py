"""Agreement between a picture and a caption: their cosine in a joint image-text space, the reference's CLIP score.

Which space: the encoder's own, when it is an image-text model (CLIP's projected image embedding against its text
tower; SigLIP's pooled vector against its text tower); otherwise the retrieval study's trained text tower and
picture projection (the frozen LM's vector of the caption through the adaptor, the picture's grid-averaged
features through the projection), which exists for the shapes pictures only. Anything else: agreement is not
available, and the reason is one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from frozenbridge.onetoken.data.features import PictureFeatures
from frozenbridge.retrieval import interface as retrieval
from frozenbridge.shapes import interface as shapes


class NotAvailable(Exception):
    """Agreement cannot be scored for this encoder and folder; the message says why."""


def normalize(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.normalize(x.float(), dim=-1)


@dataclass
class Scorer:
    """Unit vectors of pictures and texts in one space."""
    name: str
    picture_vectors: torch.Tensor  # (pictures, dim), unit length
    embed_texts: object  # list[str] -> (texts, dim) unit length

    def texts(self, texts: list[str]) -> torch.Tensor:
        # an empty caption still gets a vector (a lone space), so it scores as saying nothing rather than failing
        return self.embed_texts([t if t.strip() else " " for t in texts])

    def agreement(self, captions: list[list[str]]) -> list[float]:
        """Per picture, the mean cosine between it and each of its captions."""
        flat = [c for cs in captions for c in cs]
        vectors = self.texts(flat)
        out, at = [], 0
        for i, cs in enumerate(captions):
            out.append(float((vectors[at:at + len(cs)] @ self.picture_vectors[i]).mean()))
            at += len(cs)
        return out


def vision_text_scorer(name: str, pictures: PictureFeatures, n: int, device: torch.device, batch_size: int) -> Scorer:
    tower = retrieval.VisionTextTower(name, key="onetoken.encoder.name")

    def embed(texts: list[str]) -> torch.Tensor:
        return normalize(torch.cat([v[:, 0] for _, v, _ in tower.batches(texts, batch_size, device)]))

    return Scorer(f"{tower.family} {name}: its own text tower", normalize(pictures.feats[:n, 0]), embed)


def shapes_rows(pictures: PictureFeatures, n: int) -> list[tuple[str, int]]:
    """(shapes split, id) of each picture, from the shapes export's metadata; NotAvailable when the folder is not
    the shapes pictures."""
    rows = []
    for extra, file in zip(pictures.extra[:n], pictures.files):
        if "shapes_split" not in extra or "shapes_id" not in extra:
            raise NotAvailable(f"{Path(file).name} is not a shapes picture, and the retrieval study's towers were "
                               "trained on the shapes pictures only")
        rows.append((extra["shapes_split"], int(extra["shapes_id"])))
    return rows


def retrieval_scorer(params, params_file: Path, pictures: PictureFeatures, n: int, device: torch.device) -> Scorer:
    """The retrieval study's `onetoken.agreement.tower` of the first replicate, on the shapes pictures (the
    retrieval study reads its own section of `params_file`)."""
    rows = shapes_rows(pictures, n)
    tower_name, replicate = params.onetoken.agreement.tower, params.replicates[0]
    towers = retrieval.trained_towers(params_file)
    if tower_name not in towers:
        raise NotAvailable(f"the retrieval study did not train onetoken.agreement.tower = {tower_name!r} "
                           f"(retrieval.towers = {list(towers)})")
    space = retrieval.trained_space(params_file, tower_name, replicate, device)
    vectors = {}
    for split in sorted({s for s, _ in rows}):
        ids, means = shapes.grid_means(split, params.vision)
        vectors[split] = dict(zip(ids, means))
    grid_means = torch.stack([vectors[s][i] for s, i in rows])

    def embed(texts: list[str]) -> torch.Tensor:
        return normalize(space.embed(texts))

    return Scorer(f"the retrieval study's {tower_name} tower (replicate {replicate}) over the frozen "
                  f"{params.language.name}", normalize(space.project(grid_means)), embed)


def alignment(scorer: Scorer, captions: list[list[str]]) -> dict:
    """The reference's check of the space itself: every picture against every picture's (first) caption."""
    first = [cs[0] for cs in captions]
    sim = (scorer.picture_vectors @ scorer.texts(first).T).numpy()
    n = len(first)
    nearest = sim.argmax(1)
    own = [first[j] == first[i] for i, j in enumerate(nearest)]  # an identical caption of another picture counts
    off = ~np.eye(n, dtype=bool)
    return {"pictures": n, "own_nearest": round(100 * float(np.mean(own)), 2),
            "chance": round(100 * float(np.mean([sum(c == f for c in first) / n for f in first])), 2),
            "matched": round(float(sim.diagonal().mean()), 4), "mismatched": round(float(sim[off].mean()), 4),
            "matrix": sim}
