"""A compared setting's results folder, replicate by replicate: results/connectors/<setting>/replicates/<r>/ holds
one replicate's kept metrics and design.json, and the setting's own folder the replicates merged. What a replicate
keeps from the workspace (its design's facts, its galleries), which replicates are kept for a pipeline, and the merge
(comparison runs the experiments)."""

from __future__ import annotations

import json
from pathlib import Path

RECIPES = ("caption", "caption_qa")  # each replicate's recipes: caption is stage 1's own connector


def replicate_folder(folder: Path, replicate: int) -> Path:
    return folder / "replicates" / str(replicate)


def kept_replicate(folder: Path, key: str, values: dict[str, object], replicate: int) -> bool:
    """One replicate of a setting was made beside this pipeline (`key`, see pipeline) with these connector values."""
    info = replicate_folder(folder, replicate) / "design.json"
    facts = json.loads(info.read_text()) if info.is_file() else {}
    return facts.get("pipeline") == key and facts.get("setting") == values


def kept(folder: Path, key: str, values: dict[str, object], replicates: list[int]) -> bool:
    """Every replicate of a setting was made beside this pipeline with these connector values."""
    return all(kept_replicate(folder, key, values, r) for r in replicates)


def lowest(folder: Path, key: str, values: dict[str, object], replicate: int) -> bool:
    """Whether `replicate` is below every replicate of the setting kept for this pipeline: its galleries are then the
    setting's (the page shows the lowest replicate's), so a sitting of replicates 1 and 2 leaves replicate 0's."""
    return not any(kept_replicate(folder, key, values, r) for r in range(replicate))


def merge_setting(folder: Path, key: str, values: dict[str, object], paired_with: str | None = "mlp") -> Path:
    """The setting over every replicate kept so far for this pipeline (`key`) and these values, whichever sitting
    made it (a sitting may run some replicates only): metrics/shapes/replicates.json, stage1.json and stage1_loss.json
    merged replicate by replicate, text.json and probes.json of its first kept replicate (the zero-gate check and the probes read
    one), and design.json with its facts, its minutes summed (`untimed`: replicates restored from DVC's run
    cache, whose minutes are not their own), the replicates kept and the machines and precisions
    they ran on."""
    from frozenbridge.core.atomic import write_json

    found = (int(p.name) for p in (folder / "replicates").glob("*") if p.name.isdigit())
    done = sorted(r for r in found if kept_replicate(folder, key, values, r))
    if not done:
        return folder
    merged: dict = {}
    stage1: dict = {}  # each replicate's stage-1 curve (the regime views of section 9 read them)
    losses: dict = {}  # each replicate's stage-1 loss at every step (the equal-steps view's learning curves)
    for r in done:
        for name, into in (("stage1.json", stage1), ("stage1_loss.json", losses)):
            curve = replicate_folder(folder, r) / "metrics/shapes" / name
            into.update(json.loads(curve.read_text()) if curve.is_file() else {})
        per = json.loads((replicate_folder(folder, r) / "metrics/shapes/replicates.json").read_text())
        for recipe, tests in per.items():
            for test, tasks in tests.items():
                for task, cells in tasks.items():
                    merged.setdefault(recipe, {}).setdefault(test, {}).setdefault(task, {}).update(cells)
    shapes = folder / "metrics" / "shapes"
    shapes.mkdir(parents=True, exist_ok=True)
    write_json(shapes / "replicates.json", merged)
    for name, merged_curves in (("stage1.json", stage1), ("stage1_loss.json", losses)):
        if merged_curves:
            write_json(shapes / name, merged_curves)
    for name in ("text.json", "probes.json"):
        source = replicate_folder(folder, done[0]) / "metrics/shapes" / name
        if source.is_file():
            (shapes / name).write_bytes(source.read_bytes())
    facts = [json.loads((replicate_folder(folder, r) / "design.json").read_text()) for r in done]
    first = facts[0]
    write_json(folder / "design.json", {
        "connector_params": first["connector_params"], "image_tokens": first["image_tokens"],
        "setting": first["setting"], "pipeline": first["pipeline"], "replicates": done,
        "minutes": round(sum(timed), 2) if (timed := [f["minutes"] for f in facts if f["minutes"] is not None])
        else None,
        **({"untimed": untimed} if (untimed := [f["replicate"] for f in facts if f["minutes"] is None]) else {}),
        "benchmark_step_seconds": [s for f in facts for s in (f.get("benchmark_step_seconds") or [])] or None,
        **({"inside": first["inside"]} if first.get("inside") else {}),
        "machine": first.get("machine"), "machines": sorted({where(f) for f in facts}),
        "precision": sorted({f.get("precision", "?") for f in facts}),
        **({"paired_with": paired_with} if paired_with else {})})
    return folder


def where(facts: dict) -> str:
    """The machine a replicate's design.json names, as pairs compare machines: its CPU model (else its device) and
    how it runs bf16, "AMD EPYC (AVX512-BF16)"."""
    m = facts.get("machine") or {}
    return f"{m.get('cpu_model') or m.get('device', '?')} ({m.get('bf16_path', 'bf16 ?')})"


def made_on(folder: Path, key: str, values: dict[str, object], replicate: int) -> str | None:
    """The machine (`where`) of one replicate of a setting kept for this pipeline with these values; None where that
    replicate is not kept."""
    if not kept_replicate(folder, key, values, replicate):
        return None
    return where(json.loads((replicate_folder(folder, replicate) / "design.json").read_text()))


def stage1_loss(root: Path, replicate: int) -> dict[str, list[list[float]]]:
    """{replicate: [[step, loss], ...]}: stage 1's training loss at every step (the caption recipe's rows of
    plots/shapes/loss.csv, which shapes_summarize writes), for the learning curves of a view; {} where it has none."""
    import csv

    table = root / "plots" / "shapes" / "loss.csv"
    if not table.is_file():
        return {}
    with table.open(newline="") as f:
        rows = [[int(row["step"]), float(row["loss"])] for row in csv.DictReader(f)
                if row["recipe"] == "caption" and int(row["replicate"]) == replicate]
    return {str(replicate): rows} if rows else {}


def first_replicate(root: Path) -> str:
    from frozenbridge.core.config import read_yaml

    return str(read_yaml((root / "params.yaml").read_text())["replicates"][0])


def design_facts(root: Path) -> dict:
    """The trained part and what the language model reads, the device and precision, from the workspace's caption_qa
    run of the first replicate; from that replicate's stage 1 (its run.json) what the design did inside, the stop
    rule's checks (its curve on the training captions) and its steps."""
    info = json.loads((root / f"runs/shapes/caption_qa/{first_replicate(root)}/model/run.json").read_text())
    stage1 = root / f"runs/shapes/stage1/{first_replicate(root)}/run.json"
    first = json.loads(stage1.read_text()) if stage1.is_file() else {}
    return {"connector_params": info["connector_params"], "image_tokens": info["image_tokens"],
            "precision": info.get("precision"), "device": info.get("device"),
            **{key: first[key] for key in ("inside", "stage1_checks", "steps") if first.get(key)}}


def keep_examples(root: Path, folder: Path, name: str) -> None:
    """What the design says: the gallery of each recipe's first replicate (the cells shapes_gallery draws) as
    gallery_<recipe>.png, and those cells' prompts, true answers and outputs in examples.json."""
    from frozenbridge.core.atomic import write_json
    from frozenbridge.shapes.summary.gallery import run_gallery

    replicate, shown = first_replicate(root), {}
    for recipe in RECIPES:
        shown[recipe] = run_gallery(root / "runs/shapes" / recipe / replicate, root / "data/shapes/pictures",
                                    f"{name}, recipe {recipe}, replicate {replicate}: what the model says on test "
                                    "pictures", folder / f"gallery_{recipe}.png")
    write_json(folder / "examples.json", shown)


def keep_mlp(root: Path, results: Path) -> Path:
    """results/mlp/design.json: the default run's own facts, and the minutes bench/repro.json timed for its stage 1,
    caption_qa and their evaluations (the comparison reuses those runs)."""
    from frozenbridge.core.atomic import write_json
    from frozenbridge.core.summary import read_json_if_present
    from frozenbridge.comparison.workspace import git

    timed = read_json_if_present(root / "bench/repro.json") or {}
    parts = ("shapes_stage1@", "shapes_train@caption_qa-", "shapes_evaluate@caption-", "shapes_evaluate@caption_qa-")
    seconds = sum(s for stage, s in timed["stages"].items() if stage.startswith(parts)) if timed else None
    folder = results / "mlp"
    folder.mkdir(parents=True, exist_ok=True)
    keep_examples(root, folder, "mlp")
    steps = [timed[key] for key in ("benchmark_step_seconds", "benchmark_step_after_seconds") if key in timed]
    write_json(folder / "design.json", {**design_facts(root), "minutes": seconds and round(seconds / 60, 2),
                                        "benchmark_step_seconds": steps or None,
                                        "machine": timed.get("machine"),
                                        "commit": git(root, "rev-parse", "HEAD").strip(),
                                        "note": "the default run's own runs (metrics/shapes/), timed by "
                                                "tools.repro_timing in bench/repro.json"})
    return folder


def holder(owner: str | None, here: str) -> str:
    """Which machine holds a replicate of the own-best view, as --list says it."""
    if owner is None:
        return "no MLP yet: the first machine to run it holds it"
    return f"its MLP was made on {owner}" + (" (this machine)" if owner == here else ", so it runs there")
