"""`frozenbridge draw`, `frozenbridge folder` and `frozenbridge quick-look`: pictures to try a run on, a captioned
folder from a cached dataset, and a small run trained in minutes."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError


def draw(args) -> list[dict]:
    import numpy as np

    from frozenbridge.shapes.data.splits import sample_row
    from frozenbridge.shapes.params import DataParams

    cfg = DataParams(image_size=args.image_size)
    split = "test_heldout" if args.held_out else "test_seen"
    rng = np.random.default_rng(args.seed)
    row = None
    while row is None:
        row = sample_row(rng, split, cfg)
    out = Path(args.out)
    if out.suffix.lower() != ".png":
        raise FrozenbridgeError(f"{out}: the picture is written as PNG; name it something.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(row["png"])
    return [{"picture": str(out), "caption": row["caption"],
             "questions": [{"question": q["question"], "answer": q["answer"]} for q in row["questions"]],
             "held_out_pairs": [" ".join(p) for p in cfg.held_out] if args.held_out else []}]


def folder(args) -> list[dict]:
    from frozenbridge.onetoken.data.export import export_dataset
    from frozenbridge.onetoken.data.folder import read_folder

    out = Path(args.out)
    if out.exists():
        raise FrozenbridgeError(f"{out}: already exists; name a new folder")
    n = export_dataset(args.dataset, out, args.split, args.image_column, args.text_column, args.limit)
    read_folder(out, 0.2, 0)  # the folder it wrote reads back
    return [{"folder": str(out), "pictures": n, "dataset": args.dataset, "split": args.split}]


def quick(args) -> list[dict]:
    import logging

    from frozenbridge.shapes.params import load_params
    from frozenbridge.shapes.quick_look import Size, quick_look

    params = load_params(args.params)
    logging.getLogger("frozenbridge").setLevel(logging.INFO)  # the forecast line: how long its steps will take
    return [quick_look(params, Size(args.train_pictures, args.test_pictures, args.steps), Path(args.out))]


def show_drawn(row: dict) -> str:
    return "\n".join([f"{row['picture']}: {row['caption']}", *(f"  {q['question']} {q['answer']}"
                                                             for q in row["questions"])])


def show_folder(row: dict) -> str:
    return (f"{row['folder']}: {row['pictures']} pictures from {row['dataset']} ({row['split']}); train on it with "
            f"dvc exp run -S onetoken.folder={row['folder']}")


def show_quick_look(row: dict) -> str:
    mark = "an exact match" if row["exact_match"] else "not an exact match"
    return (f"{row['picture']}: a test picture the run never saw\n  true caption:  {row['true_caption']}\n"
            f"  model wrote:   {row['caption']}  ({mark})\n"
            f"{row['exact']} of {row['of']} test captions exactly right ({row['exact_percent']:g}%), after "
            f"{row['steps']} steps on {row['train_pictures']} pictures, in {row['seconds'] / 60:.1f} min\n"
            f"the run: {row['model']}; caption your own pictures with: frozenbridge caption {row['model']} "
            "picture.png")


def add_commands(sub, common) -> None:
    d = sub.add_parser("draw", parents=[common], help="draw a shapes test picture with its caption and questions",
                       description="Draw a picture of the shapes study (seen color-shape pairs, or --held-out "
                                   "ones), write it as PNG and print its exact caption and questions.")
    d.add_argument("out", help="where to write the PNG")
    d.add_argument("--seed", type=int, default=0, help="which picture (default 0)")
    d.add_argument("--image-size", type=int, default=224, help="side in pixels (default 224)")
    d.add_argument("--held-out", action="store_true", help="include a held-out pair (as the held-out test set)")
    d.set_defaults(func=draw, show=show_drawn)
    f = sub.add_parser("folder", parents=[common], help="a cached datasets dataset as a captioned picture folder",
                       description="Write a Hugging Face datasets dataset that is already in the local cache (or "
                                   "saved with save_to_disk) as a captioned folder (PNGs + metadata.jsonl) for the "
                                   "one-token study. Never downloads.")
    f.add_argument("dataset", help="a datasets id in the local cache (e.g. nlphuji/flickr30k) or a save_to_disk folder")
    f.add_argument("out", help="the folder to write (must not exist)")
    f.add_argument("--split", default="train", help="which split (default train)")
    f.add_argument("--image-column", default="image", help="the column holding pictures (default image)")
    f.add_argument("--text-column", default="caption", help="the column holding captions, text or a list (default "
                                                            "caption)")
    f.add_argument("--limit", type=int, default=None, help="at most this many pictures (default all)")
    f.set_defaults(func=folder, show=show_folder)
    q = sub.add_parser("quick-look", parents=[common], help="train a small run in minutes and caption a test picture",
                       description="Train the shapes study's stage 1 (the caption recipe) at a small size on "
                                   "params.yaml's backbones, caption its test pictures and draw the first one. "
                                   "Everything goes under --out; data/, runs/, metrics/ and plots/ are untouched.")
    q.add_argument("--out", default="quick", help="the folder it writes (default quick)")
    q.add_argument("--params", default="params.yaml", help="whose backbones and settings (default params.yaml)")
    q.add_argument("--train-pictures", type=int, default=1000, help="training pictures to draw (default 1000)")
    q.add_argument("--test-pictures", type=int, default=60, help="seen-pair test pictures to caption (default 60)")
    q.add_argument("--steps", type=int, default=200, help="caption training steps (default 200)")
    q.set_defaults(func=quick, show=show_quick_look)
