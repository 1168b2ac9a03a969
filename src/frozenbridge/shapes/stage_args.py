"""The arguments the shapes study's analysis stages share: where the data and the runs are."""

from __future__ import annotations

import argparse

from frozenbridge.core.stage import stage_parser


def analysis_parser(doc: str | None, runs: bool = True) -> argparse.ArgumentParser:
    ap = stage_parser(doc)
    ap.add_argument("--data", default="data", help="directory holding shapes/ and features/")
    if runs:
        ap.add_argument("--runs", default="runs", help="where the trained runs are (default runs/)")
    return ap
