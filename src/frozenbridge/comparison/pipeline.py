"""Which default pipeline a compared setting belongs to, and whether an experiment saw its pictures and features.

A kept replicate carries `pipeline(root)`: while the shapes study's entries of dvc.lock and the params it reads stay
the same, the replicate stands for HEAD's default run (comparison runs it, comparison.replicates keeps it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.workspace import git

PAIRED = ("shapes_data", "shapes_encode")  # the pictures and features every design shares with the MLP's runs
OTHER_STUDIES = ("digits", "retrieval", "onetoken", "audit")  # params sections whose stages a comparison never runs


def pipeline(root: Path) -> str:
    """The default pipeline of HEAD as far as a comparison uses it, one hash: dvc.lock's shapes stages (each with its
    command, dependencies and their hashes, params and outputs) and params.yaml less the other studies' sections.
    A commit that changes only another study (its code, params or outputs) keeps a setting; one that changes the
    shapes study's code, the shared code its stages depend on (core, bridge) or its outputs does not."""
    from frozenbridge.core.config import read_yaml

    lock = read_yaml(git(root, "show", "HEAD:dvc.lock")) or {}
    params = read_yaml(git(root, "show", "HEAD:params.yaml")) or {}
    shapes = {name: entry for name, entry in (lock.get("stages") or {}).items() if name.startswith("shapes_")}
    rest = {key: value for key, value in params.items() if key not in OTHER_STUDIES}
    return hashlib.sha256(json.dumps([shapes, rest], sort_keys=True, default=str).encode()).hexdigest()[:16]


def replicates_of(root: Path) -> list[int]:
    """The replicates the workspace's params.yaml names (its default where it names none)."""
    from frozenbridge.core.config import read_yaml
    from frozenbridge.core.params import SharedParams

    raw = read_yaml((root / "params.yaml").read_text()) or {}
    return [int(r) for r in raw.get("replicates", SharedParams().replicates)]


def same_inputs(root: Path) -> None:
    """Refuses an experiment whose pictures or features (dvc.lock's hashes of PAIRED's outputs) are not the default
    run's: where the experiment made them again (a workspace that had none) on a machine whose arithmetic differs,
    its designs would not be paired with the MLP's runs."""
    from frozenbridge.core.config import read_yaml

    ran, default = (read_yaml(text)["stages"] for text in ((root / "dvc.lock").read_text(),
                                                             git(root, "show", "HEAD:dvc.lock")))
    differ = [stage for stage in PAIRED if ran.get(stage, {}).get("outs") != default.get(stage, {}).get("outs")]
    if differ:
        raise FrozenbridgeError(f"{root}: the experiment's {' and '.join(differ)} outputs differ from the default "
                                "run's (dvc.lock): its designs did not see the MLP's pictures and features, so nothing "
                                "is kept; compare where `dvc repro shapes_encode` leaves dvc.lock as committed")
