"""Resolving a model name to weights: local directory, Hugging Face cache, or (only if the user allows it) the hub.

Nothing here reaches a network unless the name is a hub id that is not cached and HF_HUB_OFFLINE is not set;
when that fails, the user gets one line naming the model and how to supply it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import torch
from huggingface_hub.utils import logging as hub_logging
from transformers.utils import logging as hf_logging

from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.backbones")
hf_logging.set_verbosity_error()  # keep transformers' load reports and fallback notes out of the stage logs
hf_logging.disable_progress_bar()
hub_logging.set_verbosity_error()  # no wall of retry warnings when the hub is unreachable

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pth", ".pt", ".gguf")


def offline() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout: float = 3.0) -> bool:
    """One TCP connect to the hub endpoint, so an unreachable hub fails in seconds, not after minutes of retries."""
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout).close()
        return True
    except OSError:
        return False


def looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or os.path.exists(os.path.expanduser(name))


def not_available(key: str, name: str, reason: str) -> FrozenbridgeError:
    return FrozenbridgeError(
        f"{key} = {name!r}: model not available ({reason}). Supply it as a local directory "
        f"(save_pretrained or `hf download {name} --local-dir DIR`, then set {key}: DIR) or put it in the "
        f"Hugging Face cache on a connected machine; the embedded defaults need no download."
    )


def load_pretrained(loader: Callable[..., Any], name: str, key: str, **kwargs: Any) -> Any:
    """Call a `from_pretrained`-style loader on a local dir or hub id: cache first, then the hub if allowed."""
    if looks_like_path(name):
        path = Path(name).expanduser()
        if not path.is_dir():
            raise FrozenbridgeError(f"{key} = {name!r}: no such directory")
        try:
            return loader(str(path), local_files_only=True, **kwargs)
        except (OSError, ValueError, KeyError) as err:
            raise FrozenbridgeError(f"{key} = {name!r}: not a loadable model directory ({first_line(err)})") from None
    try:
        return loader(name, local_files_only=True, **kwargs)
    except (OSError, ValueError) as err:
        if offline():
            raise not_available(key, name, "not in the local Hugging Face cache and HF_HUB_OFFLINE is set") from None
        if not hub_reachable():
            raise not_available(key, name, "not in the local Hugging Face cache and the hub is unreachable") from None
        log.info("%s: %s is not cached; downloading from the Hugging Face hub (%s)", key, name, first_line(err))
    try:
        return loader(name, **kwargs)
    except Exception as err:  # any network or hub failure becomes the same one clear line
        raise not_available(key, name, f"not cached and the hub could not supply it: {first_line(err)}") from None


def first_line(err: BaseException) -> str:
    """An exception's first line, cut to 200 characters (its type's name if it says nothing): what one-line errors
    quote of the library's own message."""
    text = str(err).strip().splitlines()
    return text[0][:200] if text else type(err).__name__


def file_digest(*paths: Path) -> str:
    """A short sha256 over the files' bytes: the 'revision' of weights that have no hub commit."""
    h = hashlib.sha256()
    for p in sorted(paths):
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()[:16]


def model_revision(model: torch.nn.Module, name: str) -> str:
    """Hub commit when known, else a digest of the weight files in the local directory, else the name."""
    commit = getattr(model.config, "_commit_hash", None)
    if commit:
        return str(commit)
    path = Path(name).expanduser()
    if path.is_dir():
        weights = [p for p in path.iterdir() if p.suffix in WEIGHT_SUFFIXES]
        if weights:
            return file_digest(*weights)
    return name


def freeze(module: torch.nn.Module, role: str, name: str) -> int:
    """requires_grad False and eval mode on every parameter; logs what was frozen and how big it is."""
    module.requires_grad_(False)
    module.eval()
    n = sum(p.numel() for p in module.parameters())
    log.info("frozen %s %s: %s parameters (requires_grad=False, eval mode)", role, name, f"{n:,}")
    return n
