"""Training checkpoints, so a long run that is killed picks up where it stopped.

Every `train.checkpoint_every` steps the connector, the optimizer, any LoRA adapter, the loss history and the
position (phase, step) are written atomically to checkpoints/<run>/checkpoint.pt, outside DVC's outputs (DVC
deletes a stage's outputs before rerunning it). A restart with the same params loads it, fast-forwards the
batch streams (they are pure functions of the seed, so skipping is exact) and ends with the same weights and
metrics as an uninterrupted run. A checkpoint made under other params, data or stage-1 weights is ignored, and
the directory is removed once the run's output is written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

import torch

from frozenbridge.core.atomic import atomic_path

log = logging.getLogger("frozenbridge.checkpoint")


def fingerprint(what: dict) -> str:
    """A short hash of everything a run's numbers depend on (params, run name, device, precision, inputs); a
    checkpoint is resumed only under the same fingerprint."""
    blob = json.dumps(what, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class Checkpoints:
    def __init__(self, directory: Path | None, every: int, fingerprint: str, run: str):
        self.directory, self.every, self.fingerprint, self.run = directory, every, fingerprint, run

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else Path(self.directory) / "checkpoint.pt"

    def load(self) -> dict | None:
        """The saved state if one exists for exactly these params, else None (the run starts from step 0)."""
        if self.path is None or not self.path.is_file():
            return None
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
        except Exception as err:  # a torn or foreign file: never trusted, never fatal
            log.warning("%s: ignoring unreadable checkpoint %s (%s); starting from step 0", self.run, self.path, err)
            return None
        if state.get("fingerprint") != self.fingerprint:
            log.warning("%s: ignoring %s, made with other params or inputs; starting from step 0", self.run, self.path)
            return None
        log.info("%s: resuming from %s at step %d", self.run, self.path, len(state["history"]))
        return state

    def due(self, step: int) -> bool:
        return self.path is not None and self.every > 0 and step % self.every == 0

    def save(self, phase: int, step: int, connector, optimizer, lora: dict | None, history: list,
             extra: dict | None = None) -> None:
        """The state after `step` of phase `phase`; `extra`: what else the loop needs back on resume (JSON-like)."""
        state = {"fingerprint": self.fingerprint, "phase": phase, "step": step, "history": history,
                 "connector": connector.state_dict(), "optimizer": optimizer.state_dict(), "lora": lora,
                 "extra": extra or {}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path) as tmp:
            torch.save(state, tmp)

    def clear(self) -> None:
        if self.directory is not None and Path(self.directory).is_dir():
            shutil.rmtree(self.directory)
