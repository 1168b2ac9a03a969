"""The licence pyproject.toml declares is the one LICENSE holds, and CITATION.cff names the package's version and
licence: a release that bumps one and not the other fails here."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_is_the_declared_apache_2_0():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    text = (ROOT / "LICENSE").read_text()
    assert declared == "Apache-2.0"
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_citation_names_the_packages_version_and_license():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == project["version"] and cff["license"] == project["license"]
    assert cff["title"].startswith(project["name"]) and cff["authors"] and cff["message"]
