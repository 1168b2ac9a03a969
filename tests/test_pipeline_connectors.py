"""The connector comparison (comparison) as an experiment on the tiny project's first repro
(tests/tiny_project.py): one design's experiment kept, the workspace restored, a second call running nothing."""

from __future__ import annotations

import json

import pytest

from tiny_project import dvc, project_env, run


def test_the_connector_comparison_keeps_each_design_and_restores_the_workspace(project, baseline):
    """comparison with one tiny setting: one experiment (stage 1 and caption_qa, one replicate, to keep this
    chain short), its shapes metrics kept under results/connectors/<setting>/replicates/0/ and merged in the
    setting's folder, the workspace back to the commit's outputs; a second call runs nothing."""
    from frozenbridge.comparison.run import compare, pipeline

    # keys under shapes:, a design's own knob and a training one (the own-best view sets both)
    settings = {"resampler-2": {"connector.design": "resampler", "connector.resampler.latents": 2, "train.lr": 0.002}}
    results = project / "results/connectors"
    env = {k: v for k, v in project_env(project).items() if k in ("PATH", "PYTHONPATH", "FROZENBRIDGE_IMPORT_LOG")}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        # step=False: the benchmark step loads the embedded language model (tests/test_connectors_tool.py: its cell)
        [folder] = compare(settings, project, results, step=False, replicates=[0])
        assert compare(settings, project, results, step=False, replicates=[0]) == []  # kept
    info = json.loads((folder / "replicates/0/experiment.json").read_text())
    assert info["params_changed"]["shapes.connector.design"] == "resampler"
    assert info["params_changed"]["shapes.train.lr"] == 0.002
    assert info["params_changed"]["replicates"] == [0]
    assert info["commit"] == run(["git", "rev-parse", "HEAD"], project).stdout.strip()
    assert "the data and features from the cache" in info["note"]  # the baseline made them: not in its minutes
    scores = json.loads((folder / "replicates/0/metrics/shapes/scores.json").read_text())
    assert set(scores) == {"caption", "caption_qa"}
    merged = json.loads((folder / "metrics/shapes/replicates.json").read_text())
    assert set(merged["caption"]["seen"]["caption"]) == {"0"}
    probes = json.loads((folder / "metrics/shapes/probes.json").read_text())
    assert set(probes["skipped"]) == {"stage1", "caption_qa"}  # a resampler's tokens lie nowhere in the picture
    design = json.loads((folder / "design.json").read_text())
    assert design["minutes"] > 0 and design["image_tokens"] == 2 and design["connector_params"] > 0
    assert design["benchmark_step_seconds"] is None and design["replicates"] == [0]  # not measured here
    assert design["precision"] == ["fp32"] and design["paired_with"] == "mlp"
    assert design["setting"] == settings["resampler-2"] and design["pipeline"] == pipeline(project)
    for kept in (folder, results / "mlp"):  # what each design says: its galleries and their cells
        examples = json.loads((kept / "examples.json").read_text())
        assert set(examples) == {"caption", "caption_qa"} and examples["caption"][0]["task"] == "caption"
        assert (kept / "gallery_caption_qa.png").read_bytes()[:4] == b"\x89PNG"
    mlp = json.loads((results / "mlp/design.json").read_text())  # the default run's, reused
    assert mlp["image_tokens"] == 4 and mlp["minutes"] is None  # the tiny project has no timed full run
    assert not run(["git", "status", "--porcelain", "--untracked-files=no"], project).stdout.strip()
    assert "up to date" in dvc("status", cwd=project).stdout
