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

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.onetoken.features import PictureFeatures


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
    from frozenbridge.retrieval.text_cache import VisionTextTower

    tower = VisionTextTower(name, key="onetoken.encoder.name")

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


def retrieval_scorer(params, pictures: PictureFeatures, n: int, device: torch.device,
                     runs: Path = Path("runs"), features_dir: Path = Path("data/features")) -> Scorer:
    """The retrieval study's `onetoken.agreement.tower` of the first replicate, on the shapes pictures."""
    from frozenbridge.core.backbones import load_language
    from frozenbridge.core.feature_cache import check_features, load_feature_tensor
    from frozenbridge.core.precision import use_bf16
    from frozenbridge.retrieval.paths import run_dir
    from frozenbridge.retrieval.text_cache import lm_batches
    from frozenbridge.retrieval.towers import FeatureTower, ImageProjection

    rows = shapes_rows(pictures, n)
    tower_name, replicate = params.onetoken.agreement.tower, params.replicates[0]
    if tower_name not in params.retrieval.towers:
        raise NotAvailable(f"the retrieval study did not train onetoken.agreement.tower = {tower_name!r} "
                           f"(retrieval.towers = {list(params.retrieval.towers)})")
    weights = run_dir(tower_name, replicate, runs) / "weights.pt"
    if not weights.is_file():
        raise FrozenbridgeError(f"{weights}: not found; run `dvc repro retrieval_train` first")
    state = torch.load(weights, map_location="cpu", weights_only=True)
    vectors = {}
    for split in sorted({s for s, _ in rows}):
        path = features_dir / f"{split}.parquet"
        ids, feats, meta = load_feature_tensor(path)
        check_features(meta, path, params.vision.name, params.vision.features, params.vision.layer)
        vectors[split] = dict(zip(ids.tolist(), feats.float().mean(1)))
    grid_means = torch.stack([vectors[s][i] for s, i in rows])
    image = ImageProjection(torch.zeros(2, grid_means.shape[1]), params.retrieval.dim)
    image.load_state_dict(state["image"])
    lm = load_language(params.language.name)
    r = params.retrieval
    bf16 = use_bf16(r.text.precision, device)  # as the retrieval study embedded its captions
    tower = FeatureTower(torch.zeros(2, lm.width), torch.arange(2), r.dim,
                         r.adaptor.hidden if tower_name == "adaptor" else None)
    tower.load_state_dict(state["tower"])

    @torch.no_grad()
    def embed(texts: list[str]) -> torch.Tensor:
        raw = torch.cat([v[:, 0] for _, v, _ in lm_batches(lm, texts, r.text.pool, r.text.batch_size, device, bf16)])
        return normalize(tower.net(tower.standardize(raw)))

    with torch.no_grad():
        picture_vectors = normalize(image(grid_means))
    return Scorer(f"the retrieval study's {tower_name} tower (replicate {replicate}) over the frozen "
                  f"{params.language.name}", picture_vectors, embed)


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
