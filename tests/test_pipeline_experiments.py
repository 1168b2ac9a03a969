"""Experiments on the tiny project's first repro (tests/tiny_project.py): its cache pushed to a DVC remote and pulled
into a fresh clone that reruns nothing; the connector comparison (tools.connectors) keeping a design's experiment
and restoring the workspace; `dvc exp run -S seed=1` rerunning the seeded stages and nothing upstream."""

from __future__ import annotations

import json

import pytest

from tiny_project import dvc, project_env, run, set_params


def test_a_fresh_clone_pulls_the_shared_cache_and_reruns_nothing(project, baseline, tmp_path):
    """dvc push from one clone, dvc pull in another: generate, encode and every trained run come from the remote."""
    pushed = dvc("push", cwd=project).stdout
    assert "pushed" in pushed
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], tmp_path)
    dvc("remote", "add", "--local", "-d", "shared", str(baseline), cwd=clone)
    dvc("pull", cwd=clone)
    assert ((clone / "runs/shapes/caption/0/model/config.json").is_file()
            and (clone / "data/shapes/features/train.parquet").is_file())
    out = dvc("repro", cwd=clone).stdout
    assert "Running stage" not in out and "up to date" in out


def test_the_connector_comparison_keeps_each_design_and_restores_the_workspace(project, baseline):
    """tools.connectors with one tiny setting: one experiment (stage 1 and caption_qa, one replicate, to keep this
    chain short), its shapes metrics kept under results/connectors/<setting>/replicates/0/ and merged in the
    setting's folder, the workspace back to the commit's outputs; a second call runs nothing."""
    from frozenbridge.tools.connectors import compare, pipeline

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


SEEDED = ("shapes_stage1@0", "shapes_train@qa-1", "digits_vision", "digits_train@2-0", "retrieval_train@scratch-0",
          "onetoken_train@0", "audit_train")
UNSEEDED = ("shapes_data", "shapes_encode", "digits_data", "retrieval_embed", "onetoken_encode", "audit_encode")


def test_a_new_seed_reruns_every_trained_stage_and_exp_run_keeps_its_metrics(project, baseline):
    """A new seed changes what `dvc status` lists once params.yaml names it: every trained stage (the digits'
    vision model too), and no data, split, feature or embedding (their seeds are their own). Then `dvc exp run -S
    seed=1` through the shapes summary (one replicate and the caption recipe, to keep the suite short) trains stage 1
    again and not the data, and the experiment's metrics differ from the baseline's."""
    saved = (project / "params.yaml").read_text()
    try:
        set_params(project, seed=1)
        status = dvc("status", cwd=project).stdout
    finally:
        (project / "params.yaml").write_text(saved)
    listed = {line[:-1] for line in status.splitlines() if line.endswith(":") and not line[:1].isspace()}
    assert set(SEEDED) <= listed, status
    assert not set(UNSEEDED) & listed, status
    out = dvc("exp", "run", "-S", "seed=1", "-S", "replicates=[0]", "-S", "shapes.recipes=[caption]",
              "shapes_summarize", cwd=project).stdout
    assert "Running stage 'shapes_stage1@0'" in out
    assert "Running stage 'shapes_data'" not in out and "Running stage 'shapes_encode'" not in out
    changed = json.loads(dvc("metrics", "diff", "--json", cwd=project).stdout)
    assert "metrics/shapes/scores.json" in changed, "dvc metrics diff shows no new scores after a new seed"
    shown = dvc("exp", "show", "--no-pager", "--csv", cwd=project).stdout
    assert "seed" in shown.splitlines()[0]
