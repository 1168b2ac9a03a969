"""Keep an on-demand experiment's metrics in the repository, so the report can show what the default run leaves out.

An experiment (`dvc exp run -S ...`) lives in git refs and the DVC cache of the machine that ran it; its numbers
vanish from the report's view. `python -m frozenbridge.tools.snapshot NAME --workspace DIR` copies DIR's
metrics/**/*.json to results/NAME/metrics/ (each study's folder kept) and writes results/NAME/experiment.json: the
params that differ from this checkout's params.yaml and the commit the experiment ran on.
`python -m frozenbridge.tools.report` renders every results/ folder.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.config import read_params_file
from frozenbridge.core.errors import FrozenbridgeError


def flatten(raw: object, key: str = "") -> dict[str, object]:
    """{'train': {'lr': 1e-3}} -> {'train.lr': 1e-3}; lists stay values."""
    if not isinstance(raw, dict):
        return {key: raw}
    out: dict[str, object] = {}
    for k, v in raw.items():
        out.update(flatten(v, f"{key}.{k}" if key else str(k)))
    return out


def changed_params(experiment: dict, base: dict) -> dict[str, object]:
    """The experiment's values of every key whose value differs from the base params (a key only one has included)."""
    ours, theirs = flatten(experiment), flatten(base)
    return {k: ours.get(k) for k in sorted(set(ours) | set(theirs)) if ours.get(k) != theirs.get(k)}


def _commit(workspace: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout.strip() or None


def save(name: str, workspace: Path, base_params: Path, results: Path, only: list[str] | None = None,
         note: str | None = None, files: dict[str, object] | None = None) -> Path:
    """`only`: the metrics files to keep (paths under metrics/, e.g. shapes/scores.json), when the experiment ran
    part of the pipeline and the rest of its metrics/ is the checkout's own; `note`: how it was run, in words;
    `files`: more JSON files for the folder (name: content), written with the rest, so a folder never appears
    without them."""
    metrics = sorted((workspace / "metrics").rglob("*.json"))
    if only is not None:
        missing = [m for m in only if not (workspace / "metrics" / m).is_file()]
        if missing:
            raise FrozenbridgeError(f"--only: {', '.join(missing)} not under {workspace / 'metrics'}")
        metrics = [workspace / "metrics" / m for m in only]
    if not (workspace / "params.yaml").is_file() or not metrics:
        raise FrozenbridgeError(f"{workspace}: no params.yaml and metrics/**/*.json there; give the folder of the "
                                "experiment's workspace (after `dvc exp run`, or `dvc exp apply NAME`)")
    changed = changed_params(read_params_file(workspace / "params.yaml"), read_params_file(base_params))
    out = results / name
    with atomic_path(out) as tmp:
        for m in metrics:
            target = tmp / m.relative_to(workspace)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(m, target)
        command = "dvc exp run " + " ".join(f"-S '{k}={_spell(v)}'" for k, v in changed.items())
        write_json(tmp / "experiment.json", {"name": name, "params_changed": changed, "command": command,
                                             "commit": _commit(workspace), **({"note": note} if note else {})})
        for file, content in (files or {}).items():
            write_json(tmp / file, content)
    return out


def _spell(value: object) -> str:
    if isinstance(value, list):
        return "[" + ",".join(_spell(v) for v in value) + "]"
    return "null" if value is None else str(value)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.snapshot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="folder name under results/ (e.g. all-recipes)")
    ap.add_argument("--workspace", type=Path, required=True, help="the experiment's workspace (repo root)")
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="the defaults to compare against")
    ap.add_argument("--results", type=Path, default=Path("results"),
                    help="the folder that holds kept experiments, one subfolder each (default results)")
    ap.add_argument("--only", nargs="+", metavar="FILE",
                    help="keep only these metrics files, paths under metrics/ (e.g. shapes/scores.json): the ones "
                         "the experiment made, when it ran part of the pipeline")
    ap.add_argument("--note", help="how it was run, in words (machine, minutes, what ran): shown in the results page")
    args = ap.parse_args()
    try:
        print(save(args.name, args.workspace, args.params, args.results, args.only, args.note))
    except FrozenbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
