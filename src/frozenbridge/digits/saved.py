"""A tiny model saved as a folder: weights.pt (a state_dict) and config.json (what rebuilds it), written atomically,
plus a digest of its weights so a later stage can show they never changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.errors import FrozenbridgeError


def save_model(folder: Path, model: torch.nn.Module, config: dict) -> None:
    with atomic_path(folder) as tmp:
        tmp.mkdir(parents=True)
        torch.save(model.state_dict(), tmp / "weights.pt")
        write_json(tmp / "config.json", {**config, "weights_digest": weights_digest(model)})


def load_model(folder: Path, build, stage: str) -> tuple[torch.nn.Module, dict]:
    """(the model `build(config)` makes, with the saved weights loaded, frozen; the config)."""
    try:
        config = json.loads((folder / "config.json").read_text())
        state = torch.load(folder / "weights.pt", map_location="cpu", weights_only=True)
    except (OSError, ValueError) as err:
        raise FrozenbridgeError(f"{folder}: not a saved model ({err}); run `dvc repro {stage}` first") from None
    model = build(config)
    model.load_state_dict(state)
    model.requires_grad_(False).eval()
    return model, config


def weights_digest(model: torch.nn.Module) -> str:
    """sha256 over every parameter and buffer, in name order: equal digests mean bit-equal weights."""
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()[:16]
