"""What the model relies on in a connector design, and where a design is found by its name.

A design is one file in `frozenbridge/designs/` whose last line names its class, `DESIGN = TheClass`; its name is
the file's name, and `shapes.connector.design` chooses it. No list of designs is kept anywhere: the shapes stages
list the chosen design's file alone among their deps (dvc.yaml: `designs/${shapes.connector.design}.py`), so adding
a design leaves every stage of the default run, and its dvc.lock, as they were. Its knobs, if it has any, are its
section `shapes.connector.<name>` of params.yaml (shapes/params.py).

The model (bridge/model.py) reads a design through `Design` only. A design that puts image tokens into the sequence
extends `SequenceDesign`, which gives the parts it does not need (no reading from inside, one learning rate, nothing
inside to log); a design that reads the picture from inside the language model sets `reads_inside` and gives
`attach` and `reading`.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any, ContextManager, Protocol

import torch
from torch import nn

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.designs import design_names

DESIGNS_PACKAGE = "frozenbridge.designs"


class Design(Protocol):
    design: str  # its name: its file's in frozenbridge/designs/
    n_out: int  # image tokens it puts in the sequence (0: it reads the picture from inside the language model)
    feature_shape: list[int]
    reads_inside: bool  # True: `attach` and `reading` put the picture inside the language model's layers
    grid_tokens: tuple[int, str] | None  # how `forward`'s vectors lie on the patch grid (merge, order), or None

    @property
    def n_params(self) -> int: ...

    def config(self) -> dict: ...  # the constructor's arguments: a saved run rebuilds the design from them

    def describe(self) -> str: ...

    def __call__(self, feats: torch.Tensor) -> torch.Tensor: ...

    def param_groups(self, lr: float) -> list[dict[str, Any]]: ...  # the optimizer's groups at the run's `lr`

    def inside(self, feats: torch.Tensor) -> dict[str, Any]: ...  # what it does inside, logged during training

    def attach(self, decoder_layers: nn.ModuleList) -> None: ...

    def reading(self, feats: torch.Tensor, has_media: torch.Tensor) -> ContextManager: ...

    # and nn.Module's own: parameters, to, train, eval, state_dict, load_state_dict


class SequenceDesign(nn.Module):
    """Base of the designs whose image tokens go into the language model's input sequence."""

    reads_inside = False

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def param_groups(self, lr: float) -> list[dict[str, Any]]:
        return [{"params": list(self.parameters()), "lr": lr}]

    def inside(self, feats: torch.Tensor) -> dict[str, Any]:
        return {}

    def attach(self, decoder_layers: nn.ModuleList) -> None:
        pass

    def reading(self, feats: torch.Tensor, has_media: torch.Tensor) -> ContextManager:
        return contextlib.nullcontext()


def design_class(name: str) -> type:
    """The class of the design called `name`: `DESIGN` of frozenbridge/designs/<name>.py."""
    if name not in design_names():
        raise FrozenbridgeError(f"shapes.connector.design = {name!r} is not allowed; expected one of "
                                f"{list(design_names())} (a file each in src/frozenbridge/designs/)")
    module = importlib.import_module(f"{DESIGNS_PACKAGE}.{name}")
    found = getattr(module, "DESIGN", None)
    if not isinstance(found, type) or getattr(found, "design", None) != name:
        raise FrozenbridgeError(f"{module.__file__}: its last line must name its class, DESIGN = TheClass, and the "
                                f"class's `design` must be {name!r}, the file's name")
    return found


def rebuild(name: str, config: dict) -> Design:
    """A design from a saved run's config (`config()` of the module that was saved)."""
    return design_class(name)(**config)
