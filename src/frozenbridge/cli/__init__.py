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

from frozenbridge.cli import audit, pictures, using_a_run  # each: its commands' code, arguments and printing
from frozenbridge.core.errors import FrozenbridgeError


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="frozenbridge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of lines")
    for commands in (using_a_run, pictures, audit):  # the order `frozenbridge --help` lists them in
        commands.add_commands(sub, common)
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
        for row in rows:
            print(args.show(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
