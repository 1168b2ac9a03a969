"""Loaded at start-up by every Python process of the tiny pipeline (tests/test_pipeline.py puts this folder on
PYTHONPATH): when $FROZENBRIDGE_IMPORT_LOG names a folder, each process writes there, as it exits, its command line
and every file of the frozenbridge package it loaded, however it was loaded. tests/test_stage_deps.py checks those
files against the stage's deps."""

import atexit
import json
import os
import sys

_LOG = os.environ.get("FROZENBRIDGE_IMPORT_LOG")


def _write() -> None:
    marker = os.sep + "frozenbridge" + os.sep
    files = sorted({m.__file__ for m in list(sys.modules.values())
                    if isinstance(getattr(m, "__file__", None), str) and marker in m.__file__})
    package = [f[f.rindex(marker) + 1:] for f in files]  # frozenbridge/...
    with open(os.path.join(_LOG, f"{os.getpid()}.json"), "w") as out:
        json.dump({"argv": sys.argv, "files": package}, out)


if _LOG:
    atexit.register(_write)
