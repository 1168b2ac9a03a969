"""Stage shapes_probe: linear probes read a shape's color and its kind from the vectors under it, at the encoder output,
after the stage-1 connector and after each later recipe's connector (every replicate), trained on training-picture
shapes and tested on seen-pair and held-out-pair shapes. Writes metrics/shapes/probes.json (with each test set's
chance: the share of its most common color and kind) and plots/shapes/probes.png.
"""

from frozenbridge.bridge.saved_run import load_connector
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.evaluation.probes import (chance_levels, check_patches, held_out_shapes, place_vectors,
                                                  probe_place)
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, PLOTS, STAGE1, add_dirs, model_dir
from frozenbridge.shapes.summary.analysis_figures import probes_figure
from frozenbridge.shapes.summary.replicates import summary
from frozenbridge.shapes.training.split_data import load_split


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    args = ap.parse_args()
    params = load_params(args.params)
    splits = {name: load_split(name, f"{args.data}/pictures", f"{args.data}/features", params.vision)
              for name in ("train", "test_seen", "test_heldout")}
    grid = check_patches(splits["train"].meta)
    size = params.shapes.data.image_size
    scenes = {"train": splits["train"].shapes, "seen": splits["test_seen"].shapes,
              "heldout": held_out_shapes(splits["test_heldout"].shapes, params.shapes.data.held_out)}
    feats = {"train": splits["train"].feats, "seen": splits["test_seen"].feats, "heldout": splits["test_heldout"].feats}
    places = {"encoder": [None]}
    for recipe in (STAGE1, *[r for r in params.shapes.recipes if r != "caption"]):  # caption's connector is stage 1's
        places[recipe] = [load_connector(model_dir(args.runs, recipe, rep)) for rep in params.replicates]
    result: dict = {"shapes": {name: sum(len(s) for s in sc) for name, sc in scenes.items()},
                    "chance": chance_levels({t: scenes[t] for t in ("seen", "heldout")}), "places": {}}
    for place, connectors in places.items():
        runs = []
        for connector in connectors:
            vectors = {name: place_vectors(feats[name], scenes[name], grid, size, connector) for name in scenes}
            runs.append(probe_place((vectors["train"], scenes["train"]),
                                    {t: (vectors[t], scenes[t]) for t in ("seen", "heldout")}))
        result["places"][place] = {target: {test: summary([r[target][test] for r in runs])
                                            for test in ("seen", "heldout")} for target in ("color", "kind")}
        result["places"][place]["runs"] = len(runs)
    write_json(METRICS / "probes.json", result)
    with atomic_path(PLOTS / "probes.png") as tmp:
        probes_figure(result, tmp)


if __name__ == "__main__":
    run_cli(main)
