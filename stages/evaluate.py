"""Stage evaluate: score one trained run on the seen-pair and held-out-pair test pictures.

Greedy decoding (KV cache), exact match after trimming the ends, four conditions per item (right, blank, wrong and
no picture), the gap, wrong-picture answers scored against the picture shown, and how many distinct captions the
run writes. Writes runs/<recipe>/<replicate>/scores.json and predictions.json (a few examples per task).
"""

import argparse
import json
from pathlib import Path

from frozenbridge.atomic import write_json
from frozenbridge.errors import run_cli
from frozenbridge.evaluate import evaluate_split
from frozenbridge.params import check_replicate, load_params
from frozenbridge.recipes import RECIPES
from frozenbridge.rundata import load_blank, load_split
from frozenbridge.runtime import setup
from frozenbridge.train import load_connector, load_lora
from frozenbridge.vlm import VLM

TEST_SPLITS = {"seen": "test_seen", "heldout": "test_heldout"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    ap.add_argument("--replicate", type=int, required=True)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--data", default="data", help="directory holding shapes/ and features/")
    ap.add_argument("--runs", default="runs")
    args = ap.parse_args()
    params = load_params(args.params)
    check_replicate(params, args.replicate)
    data = Path(args.data)
    tests = {name: load_split(split, data / "shapes", data / "features", params.vision)
             for name, split in TEST_SPLITS.items()}
    blank = load_blank(data / "features", params.vision)
    run_dir = Path(args.runs) / args.recipe / str(args.replicate)
    connector = load_connector(run_dir / "model")
    device, bf16, lm = setup(params)
    load_lora(lm, run_dir / "model")
    vlm = VLM(lm, connector.to(device), device, bf16)
    info = json.loads((run_dir / "model" / "run.json").read_text())
    scores, samples = {}, {}
    for name, split in tests.items():
        scores[name], samples[name] = evaluate_split(vlm, split, blank, params.evaluate, name)
    write_json(run_dir / "predictions.json", samples)
    write_json(run_dir / "scores.json", {"recipe": args.recipe, "replicate": args.replicate, "tests": scores,
                                         "connector_params": info["connector_params"],
                                         "lora_params": info["lora_params"], "steps": info["steps"]})


if __name__ == "__main__":
    run_cli(main)
