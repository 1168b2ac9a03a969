"""`frozenbridge caption` and `frozenbridge ask`: a trained run's replies about your own pictures.

A run directory describes itself (config.json names the encoder, the language model and the connector), so no
params.yaml is read.
"""

from __future__ import annotations

import argparse
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
    """Each picture's greedy reply: the shapes study's "Image: <picture>\\n<prompt>", or with `after_prompt` the
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


def show_caption(row: dict) -> str:
    return f"{row['picture']}: {row['caption']}"


def show_answer(row: dict) -> str:
    return f"{row['picture']}: {row['question']} {row['answer']}"


def add_commands(sub, common: argparse.ArgumentParser) -> None:
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
    c.set_defaults(func=caption, show=show_caption)
    a = sub.add_parser("ask", parents=[common, model], help="answer a question about a picture",
                       description="Answer a question about one picture with a trained run.")
    a.add_argument("run", help="a trained run's directory")
    a.add_argument("picture", help="a picture file")
    a.add_argument("question", help='e.g. "What color is the circle?"')
    a.set_defaults(func=ask, show=show_answer)
