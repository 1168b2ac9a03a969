"""Stage shapes_receipts: two facts about the frozen parts, measured on the backbones params.yaml names. A ViT-family
encoder's patch embedding (a convolution with kernel = stride) equals flattened patches times one matrix (largest
difference printed; a CNN has no such layer and the receipt says so). Changing only the last input position moves
the first position's output in the encoder (attention or receptive field permitting) and leaves it exactly
unchanged in the causal language model. Writes metrics/shapes/receipts.json.
"""

import io

import pyarrow.parquet as pq
from PIL import Image

from frozenbridge.bridge.receipts import conv_equals_matmul, encoder_first_moves, language_first_moves, patch_conv
from frozenbridge.core.atomic import write_json
from frozenbridge.core.backbones import load_language, load_vision
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, add_dirs


def main() -> None:
    ap = add_dirs(stage_parser(__doc__), runs=False)
    args = ap.parse_args()
    params = load_params(args.params)
    require(f"{args.data}/pictures/train.parquet", stage="shapes_data")
    png = pq.read_table(f"{args.data}/pictures/train.parquet", columns=["png"]).column("png")[0].as_py()
    v = params.vision
    encoder = load_vision(v.name, "patches", v.layer, params.shapes.data.image_size)
    pixels = encoder.preprocess([Image.open(io.BytesIO(png)).convert("RGB")])
    conv = patch_conv(encoder.model)
    side = conv.kernel_size[0] if conv is not None else encoder.image_size // encoder.grid[1]
    out = {"encoder": encoder.name, "patch_embedding": None, "encoder_first_moves": None}
    if conv is not None:
        out["patch_embedding"] = {"kernel": list(conv.kernel_size), "max_difference": conv_equals_matmul(conv, pixels)}
    else:
        out["patch_embedding_note"] = f"{encoder.name} has no patch-embedding convolution (kernel = stride): not a ViT"
    out["encoder_first_moves"] = encoder_first_moves(encoder.forward, pixels, side)
    lm = load_language(params.language.name)
    ids = lm.tokenizer("Image: a red square and a blue circle\nCaption:", return_tensors="pt").input_ids
    out["language"] = lm.name
    out["language_first_moves"] = language_first_moves(lm.model, lm.embed(ids))
    write_json(METRICS / "receipts.json", out)


if __name__ == "__main__":
    run_cli(main)
