"""The equal-steps view of the connector comparison (issue 70): its settings from the sweep's rows, its experiments,
its tables and findings beside the own-best view's, its verdict rows and its learning-curve figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CELLS = ("caption", "count", "binding", "leftmost")


def _row(setting: str, values: dict, curve: list[tuple[int, float]]) -> dict:
    return {"setting": setting, "values": values, "curve": [[s, e, 1.0] for s, e in curve]}


def test_the_at_cap_pick_is_the_highest_share_within_the_cap_then_the_fewest_steps():
    """pick_at_cap over the plan's grid: the highest best share within the cap wins whatever the plan's rule says
    (here the plan's rule picks the one that reaches the threshold first); a tie on share goes to the fewer steps."""
    from frozenbridge.comparison.sweep.pick import pick, pick_at_cap
    from frozenbridge.comparison.sweep.plan import Plan, Setting

    grid = (Setting("lr=0.001", (("train.lr", 0.001),)), Setting("lr=0.0003", (("train.lr", 0.0003),)),
            Setting("lr=0.003", (("train.lr", 0.003),)))
    plan = Plan(threshold=60, every=50, cap=300, checks=6, gain=2.0, after=0, rule="fewest_steps_then_best_at_cap",
                grids=(("mlp", grid),), source="plan.yaml")
    rows = [_row("lr=0.001", {"train.lr": 0.001}, [(100, 60), (200, 70), (300, 70)]),
            _row("lr=0.0003", {"train.lr": 0.0003}, [(100, 10), (200, 90), (300, 95), (400, 99)]),  # 99 past the cap
            _row("lr=0.003", {"train.lr": 0.003}, [(100, 30), (200, 95), (300, 80)])]
    assert pick(rows, plan, "mlp")["setting"] == "lr=0.001"  # the plan's rule: first to 60%
    chosen = pick_at_cap(rows, plan, "mlp")
    assert (chosen["setting"], chosen["best"], chosen["best_step"]) == ("lr=0.003", 95, 200)  # 95 at 200 beats 300
    assert chosen["reason"].startswith("its best within 300 steps, 95% at step 200, is the highest of 3 settings, tied "
                                       "on best share with lr=0.0003 and reached sooner")


def test_the_equal_steps_settings_train_every_design_the_caps_steps_at_its_at_cap_pick(tmp_path):
    """Each of the six settings at its design's at_cap values, with stage1_steps and max_steps both the cap (the stop
    rule's one check at the cap); a design with no pick waits, named with what to run."""
    from frozenbridge.comparison.settings import OWN_BEST, equal_steps, own_best

    plan = tmp_path / "plan.yaml"
    plan.write_text("threshold: 60\nevery: 50\ncap: 900\nflat: {checks: 6, gain: 2.0, after: 600}\n"
                    "rule: fewest_steps_then_best_at_cap\nextend: 0\ngrids:\n  mlp:\n    - {train.lr: 1.0e-3}\n")
    picks = {d: {"values": {"train.lr": 0.001}, "setting": "lr=0.001", "steps_to_threshold": 500}
             for d in ("mlp", "resampler", "cross_attention")}
    at_cap = {d: {"values": {"train.lr": 0.0003}, "setting": "lr=0.0003"} for d in ("mlp", "resampler",
                                                                                  "cross_attention")}
    picked = tmp_path / "picked.json"
    picked.write_text(json.dumps({"picked": picks, "at_cap": at_cap}))
    ready, waiting = equal_steps(picked, plan)
    assert set(ready) == set(OWN_BEST) - {"codebook-1024"} and "codebook" in waiting["codebook-1024"]
    assert ready["mlp"] == {"connector.design": "mlp", "train.lr": 0.0003, "train.stage1_steps": 900,
                            "train.stage1_until.max_steps": 900}
    assert ready["resampler-16"]["connector.resampler.latents"] == 16
    assert own_best(picked, plan)[0]["mlp"] == {"connector.design": "mlp", "train.lr": 0.001,
                                                "train.stage1_until.max_steps": 900}  # the own-best view: its rule


def test_the_rule_checks_once_at_the_cap_and_trains_exactly_the_cap_whatever_the_share():
    """With stage1_steps at the cap, the stop rule's only check is the cap and its most steps the cap: a design that
    passes the share early gets no fewer steps than one that never does."""
    from frozenbridge.shapes.params import Stage1Until, TrainParams
    from frozenbridge.shapes.training.stage1_rule import is_check, rule_steps, stop_step

    t = TrainParams(stage1_steps=1200, stage1_until=Stage1Until(max_steps=1200))
    assert [s for s in range(1, 1201) if is_check(s, t)] == [1200] and rule_steps(t) == 1200
    assert stop_step([(1200, 100.0)], t) == stop_step([(1200, 0.0)], t) == 1200


def test_a_kept_replicate_carries_stage_1s_loss_at_every_step_and_the_merge_keeps_each(tmp_path):
    """stage1_loss reads the caption recipe's rows of this replicate from plots/shapes/loss.csv; merge_setting puts
    every kept replicate's curve in the setting's stage1_loss.json."""
    from frozenbridge.comparison.replicates import merge_setting, stage1_loss

    (tmp_path / "plots/shapes").mkdir(parents=True)
    (tmp_path / "plots/shapes/loss.csv").write_text(
        "recipe,replicate,step,phase,loss\ncaption,1,1,captions,4.5\ncaption,1,2,captions,4.0\n"
        "caption_qa,1,1,questions,2.0\ncaption,0,1,captions,9.0\n")
    assert stage1_loss(tmp_path, 1) == {"1": [[1, 4.5], [2, 4.0]]} and stage1_loss(tmp_path, 3) == {}
    folder = tmp_path / "results/equal-steps/mlp"
    values = {"connector.design": "mlp"}
    for r, loss in ((0, 3.0), (1, 2.0)):
        shapes = folder / "replicates" / str(r) / "metrics/shapes"
        shapes.mkdir(parents=True)
        (shapes / "replicates.json").write_text(json.dumps({"caption": {"seen": {"caption": {str(r): {}}}}}))
        (shapes / "stage1_loss.json").write_text(json.dumps({str(r): [[1, loss]]}))
        (folder / "replicates" / str(r) / "design.json").write_text(json.dumps(
            {"connector_params": 1, "image_tokens": 1, "setting": values, "pipeline": "k", "replicate": r,
             "minutes": 1.0}))
    merge_setting(folder, "k", values, None)
    assert json.loads((folder / "metrics/shapes/stage1_loss.json").read_text()) == {"0": [[1, 3.0]], "1": [[1, 2.0]]}


def _view(root: Path, folder: str, steps: int | None, rights: dict[str, list[float]], ends: dict[str, list[float]],
          extra: dict[str, dict] | None = None) -> None:
    """A view's kept folders: each setting's replicates.json (every cell the same rights), stage1.json (its steps
    and its last check's share) and design.json (its setting)."""
    kept = root / folder
    for name, right in rights.items():
        shapes = kept / name / "metrics/shapes"
        shapes.mkdir(parents=True)
        per = {str(i): {"right": r, "gap": r - 10.0} for i, r in enumerate(right)}
        (shapes / "replicates.json").write_text(json.dumps(
            {recipe: {test: {task: per for task in CELLS} for test in ("seen", "heldout")}
             for recipe in ("caption", "caption_qa")}))
        run_steps = steps or (250 if name == "mlp" else 1050)
        (shapes / "stage1.json").write_text(json.dumps(
            {str(i): {"curve": [[run_steps, e, 0.5]], "steps": run_steps} for i, e in enumerate(ends[name])}))
        (shapes / "stage1_loss.json").write_text(json.dumps(
            {str(i): [[s, 3.0 / s] for s in range(1, 101)] for i in range(len(right))}))
        setting = {"connector.design": name.split("-")[0], "train.lr": 0.001, **(extra or {}).get(name, {}),
                   **({"train.stage1_steps": steps} if steps else {}), "train.stage1_until.max_steps": steps or 1200}
        (kept / name / "design.json").write_text(json.dumps({"connector_params": 600, "image_tokens": 49,
                                                             "minutes": 10.0, "setting": setting}))


def _both_views(root: Path) -> None:
    """Five replicates. The own-best view: cross_attention-4 10 points ahead of its MLP everywhere, codebook-1024 10
    behind. At 1,200 equal steps cross_attention-4 is ahead nowhere (0, +5, -5, -5, +5), the codebook still 10
    behind everywhere."""
    _view(root, "results/connectors", None, {"mlp": [50, 40, 60, 45, 55], "cross_attention-4": [60, 50, 70, 55, 65],
                                             "codebook-1024": [40, 30, 50, 35, 45]},
          {"mlp": [60, 62, 65, 61, 60], "cross_attention-4": [60, 61, 60, 60, 60],
           "codebook-1024": [60, 60, 63, 60, 61]},
          {"cross_attention-4": {"connector.cross_attention.gate_lr": 0.01}})
    _view(root, "results/connectors/equal-steps", 1200,
          {"mlp": [60, 50, 70, 55, 65], "cross_attention-4": [60, 55, 65, 50, 70],
           "codebook-1024": [50, 40, 60, 45, 55]},
          {"mlp": [100, 98.33, 100, 100, 100], "cross_attention-4": [70, 65, 80, 75, 70],
           "codebook-1024": [60, 55, 66.67, 60, 58.33]})


def test_the_pages_show_the_equal_steps_view_beside_the_own_best_one_and_what_survived(tmp_path):
    """Three tables in the views' order, each saying the others; the equal-steps view's MLP and steps read from its
    design.json; the survival paragraph sets each design's findings of the two views side by side, with the steps
    each trained and a setting that moved too."""
    from frozenbridge.comparison.report.views import held_lines
    from frozenbridge.comparison.report.tables import EQUAL_STEPS, connectors_table
    from frozenbridge.comparison.report.equal_training import survival, survival_lines
    from frozenbridge.tools.report import render_results

    _both_views(tmp_path)
    table = connectors_table(tmp_path, EQUAL_STEPS)
    assert table[0].startswith("This is the equal-steps comparison, every design and the MLP trained the same 1,200 "
                               "stage-1 steps, each at its sweep setting, kept in "
                               "`results/connectors/equal-steps/<setting>/`. Beside it, read apart: the own-best view "
                               "(the table before this one).")
    assert "Its MLP is a setting of its own, the MLP at its sweep setting trained the same 1,200 steps" in table[0]
    page = render_results(tmp_path)
    assert page.index("### Own best") < page.index("### Equal steps: every design and the MLP trained the same")
    assert "- Equal steps (`results/connectors/equal-steps/<setting>/`): codebook-1024, cross_attention-4." in \
        held_lines(tmp_path)
    cells = survival(tmp_path)
    assert cells["cross_attention-4"]["survived"] == [] and not cells["cross_attention-4"]["new"]
    assert cells["cross_attention-4"]["lost"][:2] == ["ahead on held-out caption", "ahead on held-out count"]
    assert len(cells["cross_attention-4"]["lost"]) == 8
    assert set(cells["codebook-1024"]["survived"]) == {f"behind on {t} {c}" for t in ("held-out", "seen")
                                                       for c in CELLS}
    text = "\n".join(survival_lines(tmp_path))
    assert "trained 1,200 stage-1 steps" in text
    assert "**cross_attention-4.** At its own best it trained a median 1,050 stage-1 steps, its MLP 250. Its setting " \
           "differs between the views in connector.cross_attention.gate_lr too" in text
    assert "Survived: none. Lost at equal steps: ahead on held-out caption, count, binding, leftmost; ahead on seen " \
           "caption, count, binding, leftmost. New at equal steps: none." in text
    assert "**codebook-1024.** At its own best it trained a median 1,050 stage-1 steps, its MLP 250. Survived: " in text


def test_the_equal_steps_verdicts_read_the_view_and_the_share_at_the_same_step(tmp_path):
    """At equal steps the codebook is behind the MLP in every replicate (Ahead("second") holds, the paired cells), and
    its share of training captions at step 1,200 is behind in every one; the cross-attention share row does not
    hold (behind in every replicate)."""
    from frozenbridge.tools.verdicts.claims import CLAIMS, views_judged
    from frozenbridge.tools.verdicts.readers import Sources
    from frozenbridge.tools.verdicts.regime_readers import share_at_end
    from frozenbridge.tools.verdicts.rules import Ahead, judge

    _both_views(tmp_path)
    evidence = share_at_end("codebook-1024")(Sources(tmp_path))
    assert evidence.ours == ("codebook-1024 − mlp, share of the stop rule's training captions exact at step 1,200, "
                             "points per replicate: -40, -43.33, -33.33, -40, -41.67")
    assert judge(Ahead("second"), evidence)[0] == "holds"
    assert judge(Ahead("first"), share_at_end("cross_attention-4")(Sources(tmp_path)))[0] == "does not hold"
    rows = [c for c in CLAIMS if "same stage-1 steps" in c.claim]
    assert len(rows) == 5 and all(getattr(c.read, "view") == "results/connectors/equal-steps" for c in rows)
    assert views_judged()["results/connectors/equal-steps"] == 5
    verdicts = [judge(c.rule, c.read(Sources(tmp_path)))[0] for c in rows]
    # cross-attention ahead: mixed cells, its share behind; pooling: resampler-16 not run; the codebook behind, twice
    assert verdicts == ["inconclusive", "does not hold", "inconclusive", "holds", "holds"]


def test_the_learning_curves_figure_needs_two_settings_and_says_the_share_at_the_end(tmp_path):
    from frozenbridge.comparison.report import learning_curves

    out = tmp_path / "curves.png"
    assert not learning_curves.draw(tmp_path, out) and not out.exists()
    _both_views(tmp_path)
    assert learning_curves.draw(tmp_path, out) and out.stat().st_size > 10_000
    assert learning_curves.last_share(tmp_path / "results/connectors/equal-steps/mlp/metrics/shapes") == 100
    assert learning_curves.running_mean([1.0, 3.0, 5.0, 7.0], 2).tolist() == [1.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("view, flag", [("equal-steps", ["--view", "equal-steps"]), ("own-best", [])])
def test_the_missing_command_names_the_view(view, flag):
    from frozenbridge.comparison.report.tables import EQUAL_STEPS, OWN_BEST
    from frozenbridge.tools.verdicts.connector_readers import run_command

    folder = {"equal-steps": EQUAL_STEPS, "own-best": OWN_BEST}[view]
    assert run_command(folder, "mlp").split() == ["python", "-m", "frozenbridge.comparison", "--only", "mlp",
                                                  *flag]


def test_the_tool_runs_the_equal_steps_view_in_its_folder_with_its_own_mlp(monkeypatch):
    """`--view equal-steps` hands compare the view's settings, its folder and the view's MLP to pair with (the
    committed sweep's at_cap picks: every setting trains the plan's cap, stage1_steps = max_steps)."""
    from frozenbridge.comparison import run as connectors
    from frozenbridge.comparison.settings import equal_steps
    from frozenbridge.comparison.sweep.plan import DEFAULT_PATH, load_plan

    seen = {}

    def fake(settings, root, results, force=False, extra=(), step=True, replicates=None, own_mlp=None):
        seen.update(settings=settings, results=results, own_mlp=own_mlp)
        return []

    monkeypatch.setattr(connectors, "compare", fake)
    monkeypatch.setattr("sys.argv", ["connectors", "--view", "equal-steps", "--only", "mlp", "codebook-1024"])
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    connectors.main()
    cap = load_plan(DEFAULT_PATH).cap
    assert seen["results"] == Path("results/connectors/equal-steps") and set(seen["settings"]) == {"mlp",
                                                                                                 "codebook-1024"}
    assert seen["own_mlp"] == equal_steps()[0]["mlp"] == seen["settings"]["mlp"]
    assert all(v["train.stage1_steps"] == v["train.stage1_until.max_steps"] == cap for v in seen["settings"].values())
