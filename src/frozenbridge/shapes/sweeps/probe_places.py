"""Where a held-out shape's color stops being linearly readable: the probe of the shapes_probe stage, at more places.

The stage reads the encoder's cells and each trained connector's output. This reads, with the same probe, the same
shapes and the same tokens under each shape, the steps in between, so a drop can be placed:

    encoder cells                     the cells under the shape (the stage's "encoder")
    connector input                   the merged k x k blocks of encoder vectors under the shape: what the connector
                                      reads, through the tokens the connector's output is read through
    untrained connector               each replicate's connector as initialised, before any step
    stage-1 hidden layer              the stage-1 connector's GELU layer
    stage-1 output                    the stage-1 connector's output (the stage's "stage1")
    stage-1 output, no positions      the same without its learned position vectors

    python -m frozenbridge.shapes.sweeps.probe_places     # after `dvc repro`: writes results/probe-places/
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import torch

from frozenbridge.bridge.connector import merge_patches
from frozenbridge.bridge.saved_run import load_connector
from frozenbridge.core.atomic import write_json
from frozenbridge.shapes.evaluation.probes import (cells_under, check_patches, probe_inputs, probe_place,
                                                  probe_report, shape_vectors, tokens_under)
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import STAGE1, model_dir
from frozenbridge.shapes.report.analysis_tables import PROBE_PLACES
from frozenbridge.shapes.training.run import new_connector, run_seeds

OUT = Path("results/probe-places")
PLACES = PROBE_PLACES
COMMAND = "python -m frozenbridge.shapes.sweeps.probe_places"


def probe_at(fn, feats: dict, scenes: dict, grid, size: int, k: int, order: str) -> dict:
    """Probe accuracies {target: {test: %}} on `fn(features)`, each shape read through the tokens of its blocks
    (k = 1 with order "rows": the cells themselves)."""
    vectors = {}
    for name, x in feats.items():
        with torch.no_grad():
            tokens = torch.cat([fn(x[i:i + 256].float()) for i in range(0, len(x), 256)])
        vectors[name] = shape_vectors(tokens, scenes[name],
                                      lambda s: tokens_under(cells_under(s, grid, size), grid, k, order))
    return probe_place((vectors["train"], scenes["train"]), {t: (vectors[t], scenes[t]) for t in ("seen", "heldout")})


def places(params, runs: Path, feature_shape: list[int], grid) -> dict:
    """place -> [one function a replicate (or one for the encoder's places)] from features to vectors."""
    c = params.shapes.connector.mlp
    k, order = c.merge, c.order
    out = {"encoder cells": [(lambda x: x, 1, "rows")],
           "connector input": [(lambda x: merge_patches(x, grid, k, order), k, order)]}
    for rep in params.replicates:
        trained = load_connector(model_dir(runs, STAGE1, rep))
        untrained = new_connector(params, feature_shape, trained.out_dim, run_seeds(params.seed, rep)["init"])
        out.setdefault("untrained connector", []).append((untrained, k, order))
        out.setdefault("stage-1 hidden layer", []).append(
            (lambda x, m=trained: m.mlp[1](m.mlp[0](merge_patches(x, grid, k, order))), k, order))
        out.setdefault("stage-1 output", []).append((trained, k, order))
        if trained.positions is not None:
            out.setdefault("stage-1 output, no positions", []).append(
                (lambda x, m=trained: m(x) - m.positions, k, order))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.shapes.sweeps.probe_places", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="the run's params (default params.yaml)")
    ap.add_argument("--data", type=Path, default=Path("data/shapes"),
                    help="the study's pictures/ and features/ (default data/shapes)")
    ap.add_argument("--runs", type=Path, default=Path("runs/shapes"),
                    help="the trained runs whose stage-1 connectors are probed (default runs/shapes)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"the results folder to write (default {OUT})")
    args = ap.parse_args()
    params = load_params(args.params)
    scenes, feats, meta = probe_inputs(params, args.data / "pictures", args.data / "features")
    grid, size = check_patches(meta), params.shapes.data.image_size
    runs: dict = {}
    for place, fns in places(params, args.runs, meta["output_shape"], grid).items():
        runs[place] = [probe_at(fn, feats, scenes, grid, size, k, order) for fn, k, order in fns]
        print(place, "probed", flush=True)
    result = probe_report(scenes, runs)
    for place, got in result["places"].items():
        print(place, {t: got[t]["heldout"]["median"] for t in ("color", "kind")}, flush=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    write_json(args.out / "metrics" / "shapes" / "probes.json", result)
    write_json(args.out / "experiment.json", {
        "name": args.out.name, "command": COMMAND, "commit": commit,
        "note": "the shapes_probe stage's probe at the places between the encoder and the stage-1 connector's output, "
                "on the default run's data and stage-1 runs"})


if __name__ == "__main__":
    main()
