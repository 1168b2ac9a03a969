"""One error type for everything the user can fix, and the wrapper that turns it into one line and exit code 2."""

from __future__ import annotations

import logging
import sys
from typing import Callable


class FrozenbridgeError(Exception):
    """A problem with the user's input (params, files, models): the message says what and how to fix it."""


def run_cli(main: Callable[[], None]) -> None:
    """Run a stage's main; a FrozenbridgeError prints one line to stderr and exits 2 instead of a traceback."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        main()
    except FrozenbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
