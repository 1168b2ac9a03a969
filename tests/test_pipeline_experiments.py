"""Experiments on the tiny project's first repro (tests/tiny_project.py): its cache pushed to a DVC remote and pulled
into a fresh clone that reruns nothing; `dvc exp run -S seed=1` rerunning the seeded stages and nothing upstream.
The connector comparison's experiment is tests/test_pipeline_connectors.py (a file of its own, so the suite's two
workers can share these after the build)."""

from __future__ import annotations

import json

from tiny_project import dvc, run, set_params


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


SEEDED = ("shapes_stage1@0", "shapes_train@qa-1", "digits_vision", "digits_train@2-0", "retrieval_train@scratch-0",
          "onetoken_train@0", "audit_train@0")
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
