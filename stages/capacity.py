"""The capacity check, on demand (it trains stage 1 three times per replicate, the unmerged ones on four times the
tokens, about 50 minutes on 2 CPU cores): merged vs unmerged vs unmerged with a size-matched connector; exact
captions, final loss and seconds a step per replicate. Needs `dvc repro encode` first. Writes
metrics/capacity.json.
"""

from frozenbridge.core.atomic import write_json
from frozenbridge.core.config import read_params_file
from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.stage_args import analysis_parser
from frozenbridge.shapes.capacity import capacity
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.rundata import load_split
from frozenbridge.shapes.setup import setup


def main() -> None:
    ap = analysis_parser(__doc__, runs=False)
    args = ap.parse_args()
    params = load_params(args.params)
    data = load_split("train", f"{args.data}/shapes", f"{args.data}/features", params.vision)
    test = load_split("test_seen", f"{args.data}/shapes", f"{args.data}/features", params.vision)
    device, bf16, lm = setup(params)
    write_json("metrics/capacity.json", capacity(read_params_file(args.params), data, test, lm, device, bf16))


if __name__ == "__main__":
    run_cli(main)
