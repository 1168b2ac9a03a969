"""Stage shapes_probe: linear probes read a shape's color and its kind from the vectors under it, at the encoder output,
after the stage-1 connector and after each later recipe's connector (every replicate), trained on training-picture
shapes and tested on seen-pair and held-out-pair shapes. Writes metrics/shapes/probes.json (with each test set's
chance: the share of its most common color and kind) and plots/shapes/probes.png.
"""

from frozenbridge.bridge.saved_run import load_connector
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.evaluation.probes import (check_patches, place_vectors, probe_inputs, probe_place,
                                                  probe_report)
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, PLOTS, STAGE1, add_dirs, model_dir
from frozenbridge.shapes.summary.analysis_figures import probes_figure


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    args = ap.parse_args()
    params = load_params(args.params)
    scenes, feats, meta = probe_inputs(params, f"{args.data}/pictures", f"{args.data}/features")
    grid = check_patches(meta)
    size = params.shapes.data.image_size
    places, skipped = {"encoder": [None]}, {}
    for recipe in (STAGE1, *[r for r in params.shapes.recipes if r != "caption"]):  # caption's connector is stage 1's
        connectors = [load_connector(model_dir(args.runs, recipe, rep)) for rep in params.replicates]
        if connectors[0].grid_tokens is None:
            skipped[recipe] = f"the {connectors[0].design} design's tokens are not places of the picture"
        else:
            places[recipe] = connectors
    runs: dict = {}
    for place, connectors in places.items():
        runs[place] = []
        for connector in connectors:
            vectors = {name: place_vectors(feats[name], scenes[name], grid, size, connector) for name in scenes}
            runs[place].append(probe_place((vectors["train"], scenes["train"]),
                                           {t: (vectors[t], scenes[t]) for t in ("seen", "heldout")}))
    result = probe_report(scenes, runs)
    if skipped:
        result["skipped"] = skipped
    write_json(METRICS / "probes.json", result)
    with atomic_path(PLOTS / "probes.png") as tmp:
        probes_figure(result, tmp)


if __name__ == "__main__":
    run_cli(main)
