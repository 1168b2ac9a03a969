"""`frozenbridge`: use a trained run on your own pictures, or draw a test picture.

    frozenbridge caption runs/shapes/caption/0/model photo.png other.jpg     # a caption per picture
    frozenbridge caption runs/onetoken/0/model photo.png                      # the one-token study's run
    frozenbridge ask runs/shapes/caption_qa/0/model photo.png "What color is the circle?"
    frozenbridge quick-look                                                   # train a small run: quick/model
    frozenbridge caption quick/model picture.png                              # ... and caption with it
    frozenbridge draw --seed 3 picture.png                                    # a shapes picture, its caption
    frozenbridge folder nlphuji/flickr30k data/flickr --split test --limit 2000  # a cached dataset as a folder
    frozenbridge audit my_folder --out my_audit                               # your pictures and questions audited
    frozenbridge audit-example my_folder                                      # a small folder in that format
    frozenbridge audit-export data/audit/shapes                               # the shapes study's, as one

A run directory describes itself (config.json names the encoder, the language model and the connector), so no
params.yaml is read. Add --json for machine-readable output. Every problem is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError


def read_pictures(paths: list[str]):
    """Every picture as RGB, or one line naming the first that is missing or unreadable."""
    from PIL import Image, UnidentifiedImageError

    out = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise FrozenbridgeError(f"{path}: no such picture")
        try:
            with Image.open(path) as im:
                out.append(im.convert("RGB"))
        except (UnidentifiedImageError, OSError) as err:
            raise FrozenbridgeError(f"{path}: not a picture this can read ({err.__class__.__name__}); use PNG, JPEG "
                                    "or another format Pillow opens") from None
    return out


def _load(run_dir: str, device: str):
    from frozenbridge.bridge.saved_run import load_run
    from frozenbridge.core.device import pick_device

    run = load_run(Path(run_dir), pick_device(device))
    return run, run.encoder()


def _reply(run, encoder, pictures, prompt: str, max_tokens: int, after_prompt: bool = False) -> list[str]:
    """Each picture's greedy reply: the shapes study's "Image: <picture>\n<prompt>", or with `after_prompt` the
    one-token study's "<prompt> <picture>"."""
    import torch

    from frozenbridge.bridge.sequence import Interleaved, Item

    with torch.no_grad():
        feats = encoder.encode(pictures)
    items = [Interleaved((prompt, i), "") if after_prompt else Item(i, prompt, "") for i in range(len(pictures))]
    return run.model.generate(items, feats, max_tokens)


def caption(args) -> list[dict]:
    from frozenbridge.shapes.data.vocab import caption_prompt

    pictures = read_pictures(args.pictures)
    run, encoder = _load(args.run, args.device)
    how = run.config.get("captioning")  # a run that asks for captions its own way (the one-token study)
    if how is None:
        texts = _reply(run, encoder, pictures, caption_prompt(), args.max_tokens)
    else:
        texts = _reply(run, encoder, pictures, how["prompt"], args.max_tokens, after_prompt=True)
    return [{"picture": p, "caption": t} for p, t in zip(args.pictures, texts)]


def ask(args) -> list[dict]:
    from frozenbridge.shapes.data.vocab import question_prompt

    if not args.question.strip():
        raise FrozenbridgeError("the question is empty; e.g. \"What color is the circle?\"")
    pictures = read_pictures([args.picture])
    run, encoder = _load(args.run, args.device)
    if run.config.get("captioning"):
        raise FrozenbridgeError(f"{args.run}: this run was trained to caption only (the one-token study); use "
                                "`frozenbridge caption`, or a shapes run with questions "
                                "(runs/shapes/caption_qa/0/model)")
    answer = _reply(run, encoder, pictures, question_prompt(args.question.strip()), args.max_tokens)[0]
    return [{"picture": args.picture, "question": args.question.strip(), "answer": answer}]


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


def quick(args) -> list[dict]:
    import logging

    from frozenbridge.shapes.params import load_params
    from frozenbridge.shapes.quick_look import Size, quick_look

    params = load_params(args.params)
    logging.getLogger("frozenbridge").setLevel(logging.INFO)  # the forecast line: how long its steps will take
    return [quick_look(params, Size(args.train_pictures, args.test_pictures, args.steps), Path(args.out))]


def folder(args) -> list[dict]:
    from frozenbridge.onetoken.data.export import export_dataset
    from frozenbridge.onetoken.data.folder import read_folder

    out = Path(args.out)
    if out.exists():
        raise FrozenbridgeError(f"{out}: already exists; name a new folder")
    n = export_dataset(args.dataset, out, args.split, args.image_column, args.text_column, args.limit)
    read_folder(out, 0.2, 0)  # the folder it wrote reads back
    return [{"folder": str(out), "pictures": n, "dataset": args.dataset, "split": args.split}]


def audit(args) -> list[dict]:
    import dataclasses
    import logging

    from frozenbridge.audit.chain import run_audit
    from frozenbridge.audit.params import Params

    params = Params.load(args.params) if Path(args.params).is_file() else Params.parse({})
    train = dataclasses.replace(params.audit.train, **{k: v for k, v in (("stage1_steps", args.stage1_steps),
                                                                         ("stage2_steps", args.stage2_steps))
                                                       if v is not None})
    params = dataclasses.replace(
        params, audit=dataclasses.replace(params.audit, train=train),
        **({"language": dataclasses.replace(params.language, name=args.language)} if args.language else {}),
        **({"vision": dataclasses.replace(params.vision, name=args.vision)} if args.vision else {}))
    logging.getLogger("frozenbridge").setLevel(logging.INFO)
    numbers = run_audit(params, args.folder, Path(args.out))
    overall = numbers["checks"]["overall"]
    return [{"audit": str(Path(args.out) / "audit.md"), "questions": overall["questions"],
             "right": overall["score"]["right"], "best_control": overall["best_control"],
             "control": overall["score"][overall["best_control"]], "gap": overall["gap"],
             "gap_interval": overall["gap_interval"]}]


def audit_example(args) -> list[dict]:
    from frozenbridge.audit.data.example import write_example_folder
    from frozenbridge.audit.data.folder import read_audit_folder

    write_example_folder(Path(args.out))
    f = read_audit_folder(args.out)
    return [{"audit_folder": args.out, "train": f.train.n_pictures, "test": f.test.n_pictures,
             "questions": f.train.n_questions + f.test.n_questions}]


def audit_export(args) -> list[dict]:
    from frozenbridge.audit.data.export import export_shapes

    out = Path(args.out)
    if out.exists():
        raise FrozenbridgeError(f"{out}: already exists; name a new folder")
    counts = export_shapes(Path(args.pictures), out)
    return [{"audit_folder": args.out, "train": counts["train"]["pictures"], "test": counts["test"]["pictures"],
             "questions": counts["train"]["questions"] + counts["test"]["questions"]}]


def _print(rows: list[dict]) -> None:
    for r in rows:
        if "audit" in r:
            lo, hi = r["gap_interval"]
            print(f"{r['questions']} test questions: {r['right']:g}% right with the picture, {r['control']:g}% with "
                  f"the best control ({r['best_control']}): the picture adds {r['gap']:g} points (95% interval "
                  f"{lo:g} to {hi:g})\nthe audit: {r['audit']}")
            continue
        if "audit_folder" in r:
            print(f"{r['audit_folder']}: {r['train']} training and {r['test']} test pictures, {r['questions']} "
                  f"questions; audit it with: frozenbridge audit {r['audit_folder']}")
            continue
        if "exact_percent" in r:
            mark = "an exact match" if r["exact_match"] else "not an exact match"
            print(f"{r['picture']}: a test picture the run never saw\n  true caption:  {r['true_caption']}\n"
                  f"  model wrote:   {r['caption']}  ({mark})\n"
                  f"{r['exact']} of {r['of']} test captions exactly right ({r['exact_percent']:g}%), after "
                  f"{r['steps']} steps on {r['train_pictures']} pictures, in {r['seconds'] / 60:.1f} min\n"
                  f"the run: {r['model']}; caption your own pictures with: frozenbridge caption {r['model']} "
                  "picture.png")
            continue
        if "folder" in r:
            print(f"{r['folder']}: {r['pictures']} pictures from {r['dataset']} ({r['split']}); train on it with "
                  f"dvc exp run -S onetoken.folder={r['folder']}")
            continue
        if "answer" in r:
            print(f"{r['picture']}: {r['question']} {r['answer']}")
            continue
        print(f"{r['picture']}: {r['caption']}")
        for q in r.get("questions", []):
            print(f"  {q['question']} {q['answer']}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="frozenbridge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of lines")
    model = argparse.ArgumentParser(add_help=False)
    model.add_argument("--device", default="auto",
                       help="auto ($FROZENBRIDGE_DEVICE, else CUDA, else Apple's GPU, else CPU), cpu, cuda, cuda:N "
                            "or mps")
    model.add_argument("--max-tokens", type=int, default=28, help="the most new tokens in a reply (default 28)")

    c = sub.add_parser("caption", parents=[common, model], help="a caption for each picture",
                       description="Caption each picture with a trained run (RUN: a directory with config.json, "
                                   "e.g. runs/shapes/caption/0/model, the run trained to caption).")
    c.add_argument("run", help="a trained run's directory")
    c.add_argument("pictures", nargs="+", help="picture files (PNG, JPEG, ...)")
    c.set_defaults(func=caption)
    a = sub.add_parser("ask", parents=[common, model], help="answer a question about a picture",
                       description="Answer a question about one picture with a trained run.")
    a.add_argument("run", help="a trained run's directory")
    a.add_argument("picture", help="a picture file")
    a.add_argument("question", help='e.g. "What color is the circle?"')
    a.set_defaults(func=ask)
    d = sub.add_parser("draw", parents=[common], help="draw a shapes test picture with its caption and questions",
                       description="Draw a picture of the shapes study (seen color-shape pairs, or --held-out "
                                   "ones), write it as PNG and print its exact caption and questions.")
    d.add_argument("out", help="where to write the PNG")
    d.add_argument("--seed", type=int, default=0, help="which picture (default 0)")
    d.add_argument("--image-size", type=int, default=224, help="side in pixels (default 224)")
    d.add_argument("--held-out", action="store_true", help="include a held-out pair (as the held-out test set)")
    d.set_defaults(func=draw)
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
    f.set_defaults(func=folder)
    q = sub.add_parser("quick-look", parents=[common], help="train a small run in minutes and caption a test picture",
                       description="Train the shapes study's stage 1 (the caption recipe) at a small size on "
                                   "params.yaml's backbones, caption its test pictures and draw the first one. "
                                   "Everything goes under --out; data/, runs/, metrics/ and plots/ are untouched.")
    q.add_argument("--out", default="quick", help="the folder it writes (default quick)")
    q.add_argument("--params", default="params.yaml", help="whose backbones and settings (default params.yaml)")
    q.add_argument("--train-pictures", type=int, default=1000, help="training pictures to draw (default 1000)")
    q.add_argument("--test-pictures", type=int, default=60, help="seen-pair test pictures to caption (default 60)")
    q.add_argument("--steps", type=int, default=200, help="caption training steps (default 200)")
    q.set_defaults(func=quick)
    u = sub.add_parser("audit", parents=[common], help="audit your own pictures and questions: is the score real?",
                       description="Train the connector on FOLDER's training pictures (stage 1 on their captions "
                                   "when they have any, then their questions) and score its test questions with "
                                   "the right picture, a blank one, another test picture and none; per kind, on "
                                   "held-out combinations, with the failures read and a linear probe of the "
                                   "frozen encoder. FOLDER holds train/ and test/, each with pictures and a "
                                   "metadata.jsonl (README: Your own pictures and questions). Writes --out: "
                                   "audit.md (the page), audit.png, audit.json (every number), answers.jsonl, "
                                   "the features and the run. Backbones and settings: params.yaml's (vision, "
                                   "language, audit:) when there is one here, else the embedded defaults.")
    u.add_argument("folder", help="the folder to audit")
    u.add_argument("--out", default="audit", help="the folder it writes (default audit)")
    u.add_argument("--params", default="params.yaml", help="whose backbones and audit settings (default "
                                                           "params.yaml; the defaults where there is none)")
    u.add_argument("--stage1-steps", type=int, default=None, help="caption steps (default audit.train.stage1_steps)")
    u.add_argument("--stage2-steps", type=int, default=None, help="question steps (default audit.train.stage2_steps)")
    u.add_argument("--language", default=None, help="the language model (default language.name)")
    u.add_argument("--vision", default=None, help="the vision encoder (default vision.name)")
    u.set_defaults(func=audit)
    e = sub.add_parser("audit-example", parents=[common], help="write a small example folder in the audit's format",
                       description="Write 12 training and 6 test pictures of coloured shapes with captions and "
                                   "questions, two test pictures marked held out: a folder to copy the format from.")
    e.add_argument("out", help="the folder to write (must not exist)")
    e.set_defaults(func=audit_example)
    x = sub.add_parser("audit-export", parents=[common], help="the shapes study's pictures as an audit folder",
                       description="Write the shapes study's pictures and questions (data/shapes/pictures, from "
                                   "`dvc repro shapes_data`) as an audit folder: its audit should agree with the "
                                   "study's own table.")
    x.add_argument("out", help="the folder to write (must not exist)")
    x.add_argument("--pictures", default="data/shapes/pictures", help="the shapes pictures (default "
                                                                      "data/shapes/pictures)")
    x.set_defaults(func=audit_export)
    return ap


def main(argv: list[str] | None = None) -> int:
    import logging

    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        rows = args.func(args)
    except FrozenbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows if len(rows) > 1 or args.command == "caption" else rows[0], indent=2))
    else:
        _print(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
