"""Stage shapes_evaluate: score one trained run on the seen-pair and held-out-pair test pictures.

Greedy decoding (KV cache), exact match after trimming the ends, four conditions per item (right, blank, wrong and
no picture), the gap, wrong-picture answers scored against the picture shown, and how many distinct captions the
run writes. Writes runs/shapes/<recipe>/<replicate>/scores.json and predictions.json (every item, every condition).
"""

import json

from frozenbridge.bridge.saved_run import load_run, read_config
from frozenbridge.core.atomic import write_json
from frozenbridge.core.params import check_replicate
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.data.vocab import RECIPE_NAMES, TEST_SPLITS
from frozenbridge.shapes.evaluation.scoring import evaluate_split
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import add_dirs, model_dir, run_dir
from frozenbridge.shapes.training.split_data import load_blank, load_split
from frozenbridge.shapes.training.start import setup


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    ap.add_argument("--recipe", required=True, choices=RECIPE_NAMES, help="the recipe whose run to evaluate (one of %(choices)s)")
    ap.add_argument("--replicate", type=int, required=True, help="one of params.yaml replicates")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    tests = {name: load_split(split, f"{args.data}/pictures", f"{args.data}/features", params.vision)
             for name, split in TEST_SPLITS.items()}
    blank = load_blank(f"{args.data}/features", params.vision)
    model = model_dir(args.runs, args.recipe, args.replicate)
    read_config(model)  # a missing or unreadable run fails here, before the language model loads
    info = json.loads((model / "run.json").read_text())
    device, bf16, lm = setup(params)
    vlm = load_run(model, device, bf16, lm).model
    scores, predictions = {}, {}
    for name, split in tests.items():
        scores[name], predictions[name] = evaluate_split(vlm, split, blank, params.shapes.evaluate, name)
    out = run_dir(args.runs, args.recipe, args.replicate)
    write_json(out / "predictions.json", predictions)
    write_json(out / "scores.json", {"recipe": args.recipe, "replicate": args.replicate, "tests": scores,
                                     "connector_params": info["connector_params"],
                                     "lora_params": info["lora_params"], "steps": info["steps"]})


if __name__ == "__main__":
    run_cli(main)
