"""A first result in minutes: the shapes study's stage 1 at a small size, in a folder of its own.

    frozenbridge quick-look                      # quick/: about 5 minutes at a 1.0 s benchmark step
    frozenbridge quick-look --steps 100 --train-pictures 500 --out /tmp/quick

It draws training and seen-pair test pictures with params.yaml's `shapes.data`, each split from its own random
stream, as the pipeline does. It encodes them once with params.yaml's encoder and trains the connector on captions
(the caption recipe, replicate 0's seed) on params.yaml's language model. The trained run is saved where
`frozenbridge caption` reads it. Then it captions every test picture greedily, scores exact match, prints the first
picture's caption and draws it. Everything goes under `--out`: data/, runs/, metrics/ and plots/ stay as they are.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch

from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones import load_vision
from frozenbridge.core.device import pick_device
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.feature_cache import encode_images, picture_batches
from frozenbridge.core.measure import machine
from frozenbridge.shapes.data.splits import generate_split, split_seeds
from frozenbridge.shapes.evaluation.exact import exact_match
from frozenbridge.shapes.evaluation.scoring import run_generation
from frozenbridge.shapes.params import Params
from frozenbridge.shapes.training.run import train
from frozenbridge.shapes.training.split_data import load_split
from frozenbridge.shapes.training.start import setup

log = logging.getLogger("frozenbridge.quick")
SPLITS = {"train": "train", "test": "test_seen"}  # the quick look's name of each split -> the pipeline's


@dataclasses.dataclass(frozen=True)
class Size:
    train_pictures: int = 1000
    test_pictures: int = 60
    steps: int = 200

    def check(self) -> None:
        for key, least in (("train_pictures", 16), ("test_pictures", 1), ("steps", 1)):
            if getattr(self, key) < least:
                flag = "--" + key.replace("_", "-")
                raise FrozenbridgeError(f"{flag} = {getattr(self, key)} is too small; it must be at least {least}")


def scaled(params: Params, size: Size) -> Params:
    """params.yaml's params at the quick look's size: fewer pictures and steps, one replicate, the caption recipe.
    Stage 1 trains `steps` exactly (its rule is off: the quick look's minutes are the point)."""
    sizes = dataclasses.replace(params.shapes.data.sizes, train=size.train_pictures, test_seen=size.test_pictures)
    shapes = dataclasses.replace(
        params.shapes, recipes=["caption"], data=dataclasses.replace(params.shapes.data, sizes=sizes),
        train=dataclasses.replace(params.shapes.train, stage1_steps=size.steps, checkpoint_every=0, processes=1,
                                  stage1_until=dataclasses.replace(params.shapes.train.stage1_until, share=0.0)))
    return dataclasses.replace(params, replicates=[0], shapes=shapes)


def make_pictures(params: Params, out: Path) -> None:
    seeds = split_seeds(params.shapes.data.seed)
    with atomic_path(out) as tmp:
        tmp.mkdir()
        for name, split in SPLITS.items():
            table = generate_split(split, getattr(params.shapes.data.sizes, split), params.shapes.data, seeds[split])
            pq.write_table(table, tmp / f"{name}.parquet")


def encode(params: Params, pictures: Path, out: Path) -> None:
    device = pick_device(params.device)
    encoder = load_vision(params.vision.name, params.vision.features, params.vision.layer,
                          params.shapes.data.image_size).to(device)
    with atomic_path(out) as tmp:
        tmp.mkdir()
        for name in SPLITS:
            path = pictures / f"{name}.parquet"
            total = pq.ParquetFile(path).metadata.num_rows
            encode_images(encoder, picture_batches(path, params.vision.batch_size), total, tmp / f"{name}.parquet",
                          params.vision.dtype, {"split": name}, f"encode {name}")


def draw(png: bytes, truth: str, said: str, right: bool, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    fig, ax = plt.subplots(figsize=(4.2, 5.0))
    ax.imshow(Image.open(io.BytesIO(png)))
    ax.set_axis_off()
    mark, color = ("exact match", "green") if right else ("not an exact match", "red")
    ax.set_title(f"true: {truth}\nmodel: {said}\n{mark}", fontsize=9, color=color, loc="left")
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)


def quick_look(params: Params, size: Size, out: Path) -> dict:
    """Pictures, features, a stage-1 run and its test captions under `out`; returns what it printed and where."""
    size.check()
    params = scaled(params, size)
    clock = {"start": time.perf_counter()}

    def lap(name: str) -> None:
        now = time.perf_counter()
        clock[name] = round(now - clock.pop("last", clock["start"]), 1)
        clock["last"] = now
    pictures, features, model = out / "pictures", out / "features", out / "model"
    make_pictures(params, pictures)
    lap("pictures")
    encode(params, pictures, features)
    lap("encode")
    data = load_split("train", pictures, features, params.vision)
    device, bf16, lm = setup(params)
    lap("models")
    train(params, None, 0, data, lm, device, bf16, model, checkpoint_dir=None)
    lap("train")
    vlm = load_run(model, device, bf16, lm).model
    test = load_split("test", pictures, features, params.vision)
    rows = [test.caption_item(i) for i in range(len(test.captions))]
    # Training compiled the layers of `lm`; decoding through them with a KV cache recompiles each layer's cache guard
    # until dynamo gives up with a page of warnings. Decode eager, as the evaluation stage and the stop rule do.
    with torch.compiler.set_stance("force_eager"):
        said = run_generation(vlm, rows, test.feats, params.shapes.evaluate, params.shapes.evaluate.caption_tokens,
                              "captions")
    right = [exact_match(s, r.target) for s, r in zip(said, rows)]
    png = pq.read_table(pictures / "test.parquet", columns=["png"]).column("png")[0].as_py()
    draw(png, rows[0].target, said[0], right[0], out / "look.png")
    lap("captions")
    seconds = {k: v for k, v in clock.items() if k not in ("start", "last")}
    result = {"model": str(model), "picture": str(out / "look.png"), "caption": said[0], "true_caption": rows[0].target,
              "exact_match": right[0], "exact": sum(right), "of": len(right),
              "exact_percent": round(100 * sum(right) / len(right), 2), "train_pictures": size.train_pictures,
              "steps": size.steps, "seconds": round(sum(seconds.values()), 1), "stage_seconds": seconds,
              "machine": machine(device, False)}
    write_json(out / "scores.json", result)
    return result
