"""The params.yaml errors the pages quote are the validator's own words: each quoted `error: params.yaml: ...` line
that names a key and gives the whole message is rebuilt by setting that key in the shipped params.yaml and parsing
it with its study's params, so a list of allowed keys cannot drift from the code (a new study section, say)."""

from __future__ import annotations

import ast
import copy
import importlib
import re
from pathlib import Path

import pytest
import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.params import STUDY_SECTIONS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
QUOTED = re.compile(r"`error: (params\.yaml: [^`]+)`")
UNKNOWN = re.compile(r"params\.yaml: unknown key ([\w.]+);")
REFUSED = re.compile(r"params\.yaml: ([\w.]+) = (.+?) is not allowed;")


def quoted() -> list[tuple[str, str]]:
    """(page, message) of every whole quoted message: none cut short with "..." and none about a key's index."""
    found = []
    for page in PAGES:
        for message in QUOTED.findall(page.read_text()):
            if "..." not in message and (UNKNOWN.match(message) or REFUSED.match(message)):
                found.append((page.name, message))
    return found


def validator_says(message: str) -> str:
    """The validator's error for the key and value `message` names, set in the shipped params.yaml."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    if unknown := UNKNOWN.match(message):
        key, value = unknown.group(1), 1
    else:
        refused = REFUSED.match(message)
        key, value = refused.group(1), ast.literal_eval(refused.group(2))
    *path, last = key.split(".")
    at = copy.deepcopy(raw)
    inner = at
    for part in path:
        inner = inner.setdefault(part, {})
    inner[last] = value
    study = path[0] if path and path[0] in STUDY_SECTIONS else "shapes"
    params = importlib.import_module(f"frozenbridge.{study}.params").Params
    with pytest.raises(FrozenbridgeError) as err:
        params.parse(at)
    return str(err.value)


def test_the_pages_quote_params_errors_whole():
    pages = {page for page, _ in quoted()}
    assert "scaling.md" in pages  # the shared errors' table: the allowed top-level keys among them


@pytest.mark.parametrize("page,message", quoted(), ids=lambda v: v if v.endswith(".md") else v[:50])
def test_a_quoted_params_error_is_what_the_validator_says(page, message):
    assert validator_says(message) == message


def test_a_stale_list_of_allowed_keys_is_caught():
    """The page as it was before the audit's section: a list of allowed keys without `audit`."""
    stale = ("params.yaml: unknown key sede; allowed keys: device, digits, language, onetoken, replicates, retrieval, "
             "seed, shapes, vision")
    assert validator_says(stale) != stale
