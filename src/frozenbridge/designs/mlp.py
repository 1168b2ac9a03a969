"""Design 1, the reference's: each k x k block of neighbouring patches concatenated, through a two-layer MLP, into
one image token. It is the bridge's own connector (bridge/connector.py), which every study uses; this file names
it as a design."""

from __future__ import annotations

from frozenbridge.bridge.connector import MergedPatchMLP

DESIGN = MergedPatchMLP
