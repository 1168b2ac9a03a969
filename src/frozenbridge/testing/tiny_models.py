"""Test builders: the three tiny random-weight backbones the pipeline tests run on (a CLIP, a SigLIP and a
Qwen2-style LM with its tokenizer), saved with save_pretrained. The builders of every family the family tests load
are in tiny_language.py and tiny_vision.py.

They load through exactly the code path a hub id or local directory takes, so the whole pipeline can be exercised
in seconds with no download: `python -m frozenbridge.testing.tiny_models DIR` writes DIR/{clip,siglip,qwen2}.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from frozenbridge.testing.tiny_language import build_qwen2
from frozenbridge.testing.tiny_vision import build_clip, build_siglip


def build_all(root: Path) -> dict[str, Path]:
    paths = {name: Path(root) / name for name in ("clip", "siglip", "qwen2")}
    build_clip(paths["clip"])
    build_siglip(paths["siglip"])
    build_qwen2(paths["qwen2"])
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.testing.tiny_models", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path, help="where to write clip/, siglip/ and qwen2/")
    args = ap.parse_args()
    for name, path in build_all(args.dir).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
