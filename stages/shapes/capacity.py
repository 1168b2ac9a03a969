"""Stage shapes_capacity, on demand (frozen in dvc.yaml; it trains stage 1 three times per replicate, the unmerged
ones on four times the tokens): merged vs unmerged vs unmerged with a size-matched connector; exact captions, final
loss and seconds a step per replicate. Needs shapes_encode first. Writes metrics/shapes/capacity.json.
"""

from frozenbridge.core.atomic import write_json
from frozenbridge.core.config import read_params_file
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, add_dirs
from frozenbridge.shapes.sweeps.capacity import capacity
from frozenbridge.shapes.training.split_data import load_split
from frozenbridge.shapes.training.start import setup


def main() -> None:
    ap = add_dirs(stage_parser(__doc__), runs=False)
    args = ap.parse_args()
    params = load_params(args.params)
    data = load_split("train", f"{args.data}/pictures", f"{args.data}/features", params.vision)
    test = load_split("test_seen", f"{args.data}/pictures", f"{args.data}/features", params.vision)
    device, bf16, lm = setup(params)
    write_json(METRICS / "capacity.json", capacity(read_params_file(args.params), data, test, lm, device, bf16))


if __name__ == "__main__":
    run_cli(main)
