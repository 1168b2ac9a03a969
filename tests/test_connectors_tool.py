"""The connector comparison's command (tools/connectors.py): what each setting runs, what counts as kept, and the
refusal to start on a workspace with uncommitted changes."""

from __future__ import annotations

import json
import subprocess

import pytest

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.shapes.params import DESIGNS
from frozenbridge.tools.connectors import SETTINGS, command, compare, kept


def test_every_setting_is_one_experiment_of_stage1_and_caption_qa_with_its_design():
    assert {values["design"] for values in SETTINGS.values()} == set(DESIGNS) - {"mlp"}  # mlp: the default run's
    assert command(SETTINGS["resampler-16"]) == [
        "dvc", "exp", "run", "-S", "shapes.connector.design=resampler", "-S", "shapes.connector.latents=16",
        "-S", "shapes.recipes=[caption,caption_qa]"]


def test_a_setting_is_kept_only_for_the_commit_it_ran_on(tmp_path):
    (tmp_path / "experiment.json").write_text(json.dumps({"commit": "abc"}))
    assert kept(tmp_path, "abc") and not kept(tmp_path, "def") and not kept(tmp_path / "none", "abc")


def test_it_refuses_a_workspace_with_uncommitted_changes(tmp_path):
    for cmd in (["git", "init", "-q"], ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                        "--allow-empty", "-m", "x"]):
        subprocess.run(cmd, cwd=tmp_path, check=True)
    (tmp_path / "params.yaml").write_text("seed: 0\n")
    subprocess.run(["git", "add", "params.yaml"], cwd=tmp_path, check=True)
    with pytest.raises(FrozenbridgeError, match="uncommitted changes"):
        compare(SETTINGS, tmp_path, tmp_path / "results")
