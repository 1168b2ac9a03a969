"""Stage onetoken_encode: every picture of the captioned folder through the frozen encoder once, as one pooled vector.

Reads params.yaml onetoken.folder (a folder in the datasets imagefolder layout: metadata.jsonl or metadata.csv with
file_name and text; train/ and test/ subfolders keep their split, otherwise onetoken.test_fraction of the pictures,
drawn with onetoken.split_seed, are the test set) and checks every row and picture before encoding. Writes
data/onetoken/features/{train,test}.parquet (the feature cache's format: the pooled vector, the file, its captions,
the metadata's other columns) and metrics/onetoken/encode.json.
"""

import logging

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones.vision import load_vision
from frozenbridge.core.device import pick_device
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.onetoken.data.features import encode_pictures
from frozenbridge.onetoken.data.folder import read_folder
from frozenbridge.onetoken.params import load_params
from frozenbridge.onetoken.paths import FEATURES, METRICS

log = logging.getLogger("frozenbridge.onetoken")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    o = params.onetoken
    splits = read_folder(o.folder, o.test_fraction, o.split_seed)  # every picture checked before the encoder
    encoder = load_vision(o.encoder.name, "pooled", None, o.encoder.image_size, key="onetoken.encoder")
    encoder.to(pick_device(params.device))
    stats = {"folder": o.folder, "encoder": encoder.name, "width": encoder.width, "splits": {}}
    with atomic_path(FEATURES) as tmp:
        tmp.mkdir(parents=True)
        for split, pictures in splits.items():
            encode_pictures(encoder, pictures, tmp / f"{split}.parquet", o.encoder.batch_size, o.folder,
                            f"encode {split}")
            stats["splits"][split] = {"pictures": len(pictures),
                                      "captions": sum(len(p.captions) for p in pictures)}
    write_json(METRICS / "encode.json", stats)
    log.info("%s: %s", FEATURES, stats["splits"])


if __name__ == "__main__":
    run_cli(main)
