"""Stage evaluate: score one trained run on the seen-pair and held-out-pair test pictures.

Greedy decoding (KV cache), exact match after trimming the ends, four conditions per item (right, blank, wrong and
no picture), the gap, wrong-picture answers scored against the picture shown, and how many distinct captions the
run writes. Writes runs/<recipe>/<replicate>/scores.json and predictions.json (every item, every condition).
"""

import json

from frozenbridge.bridge.saved_run import load_run, read_config
from frozenbridge.core.atomic import write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.evaluate import evaluate_split
from frozenbridge.shapes.params import load_params
from frozenbridge.studies import check_replicate
from frozenbridge.shapes.rundata import load_blank, load_split
from frozenbridge.shapes.setup import setup
from frozenbridge.shapes.vocab import RECIPE_NAMES, TEST_SPLITS, model_dir, run_dir


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--recipe", required=True, choices=RECIPE_NAMES)
    ap.add_argument("--replicate", type=int, required=True)
    ap.add_argument("--data", default="data", help="directory holding shapes/ and features/")
    ap.add_argument("--runs", default="runs")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    tests = {name: load_split(split, f"{args.data}/shapes", f"{args.data}/features", params.vision)
             for name, split in TEST_SPLITS.items()}
    blank = load_blank(f"{args.data}/features", params.vision)
    model = model_dir(args.runs, args.recipe, args.replicate)
    read_config(model)  # a missing or unreadable run fails here, before the language model loads
    info = json.loads((model / "run.json").read_text())
    device, bf16, lm = setup(params)
    vlm = load_run(model, device, bf16, lm).model
    scores, predictions = {}, {}
    for name, split in tests.items():
        scores[name], predictions[name] = evaluate_split(vlm, split, blank, params.evaluate, name)
    out = run_dir(args.runs, args.recipe, args.replicate)
    write_json(out / "predictions.json", predictions)
    write_json(out / "scores.json", {"recipe": args.recipe, "replicate": args.replicate, "tests": scores,
                                     "connector_params": info["connector_params"],
                                     "lora_params": info["lora_params"], "steps": info["steps"]})


if __name__ == "__main__":
    run_cli(main)
