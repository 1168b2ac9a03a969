"""A trained module saved as a folder that rebuilds it, the one way every study saves what it trained: the bridge's
saved runs (connector, LoRA), the digits study's classifier, character LM and adapters, the retrieval study's towers.

    folder/config.json   what rebuilds the module (its caller's keys) and weights_digest, a hash of the weights
    folder/weights.pt    the state_dict (or a dict of named state_dicts) as torch.save writes it

The digest lets a later stage show that frozen weights never changed, and a reader that two folders hold bit-equal
weights without loading them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import torch

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.errors import FrozenbridgeError

CONFIG, WEIGHTS = "config.json", "weights.pt"


def _flat(state: dict, prefix: str = ""):
    for name, value in state.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value


def weights_digest(weights: torch.nn.Module | dict) -> str:
    """sha256 over every tensor of a module's state_dict (or of a state dict, nested dicts flattened), in name
    order: equal digests mean bit-equal weights (bf16 tensors hashed as their raw 16-bit words)."""
    state = weights.state_dict() if isinstance(weights, torch.nn.Module) else weights
    h = hashlib.sha256()
    for name, t in sorted(_flat(state)):
        h.update(name.encode())
        t = t.detach().contiguous().cpu()
        h.update((t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes())
    return h.hexdigest()[:16]


def write_module(directory: Path, state: dict, config: dict, weights: str = WEIGHTS) -> None:
    """`state` and `config` (plus weights_digest) into `directory`, which exists: callers make it atomically, with
    whatever else their run writes beside."""
    directory = Path(directory)
    torch.save(state, directory / weights)
    write_json(directory / CONFIG, {**config, "weights_digest": weights_digest(state)})


def save_module(folder: Path, module: torch.nn.Module, config: dict) -> None:
    """`module` saved alone as `folder`, written atomically."""
    with atomic_path(folder) as tmp:
        tmp.mkdir(parents=True)
        write_module(tmp, module.state_dict(), config)


def read_config(folder: Path, how_to_make: str, missing: str = "not found") -> dict:
    """The folder's config.json, or one line naming it, what is wrong (`missing` when it is absent) and
    `how_to_make` (e.g. "run `dvc repro digits_language` first")."""
    path = Path(folder) / CONFIG
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: {missing}; {how_to_make}")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise FrozenbridgeError(f"{path}: not valid JSON ({err}); {how_to_make}") from None


def read_weights(folder: Path, how_to_make: str, weights: str = WEIGHTS, missing: str = "not found") -> dict:
    """The folder's saved state, on the CPU, or one line naming the file, what is wrong and `how_to_make`."""
    path = Path(folder) / weights
    if not path.is_file():
        raise FrozenbridgeError(f"{path}: {missing}; {how_to_make}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, OSError, ValueError) as err:
        raise FrozenbridgeError(f"{path}: unreadable weights ({err}); {how_to_make}") from None


def load_module(folder: Path, build: Callable[[dict], torch.nn.Module], stage: str) -> tuple[torch.nn.Module, dict]:
    """(the module `build(config)` makes, with the saved weights loaded, frozen; the config); `stage` is the stage
    that makes the folder, for the error line."""
    how = f"run `dvc repro {stage}` first"
    config = read_config(folder, how)
    model = build(config)
    model.load_state_dict(read_weights(folder, how))
    model.requires_grad_(False).eval()
    return model, config
