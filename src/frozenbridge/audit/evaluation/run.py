"""The audit's check (the audit_check stage, and `frozenbridge audit`'s last step): every trained replicate answers
every test question under the four conditions, every number is computed from those answers, the runs' loss curves
and the features, and the page is written from the numbers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from frozenbridge.audit.data.features import load_features
from frozenbridge.audit.data.folder import AuditFolder
from frozenbridge.audit.evaluation.agreement import EXPORTED, agreement, study_reference
from frozenbridge.audit.evaluation.answers import answer_records, answer_tokens
from frozenbridge.audit.evaluation.checks import audit_numbers
from frozenbridge.audit.evaluation.curve import learning_curve
from frozenbridge.audit.evaluation.probe import probe_kinds
from frozenbridge.audit.evaluation.repeats import repeats
from frozenbridge.audit.params import Params
from frozenbridge.audit.paths import run_dir
from frozenbridge.audit.summary.figure import draw_audit
from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.device import pick_device
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.precision import use_bf16

log = logging.getLogger("frozenbridge.audit")
SHAPES_SCORES = Path("metrics/shapes/scores.json")  # the shapes study's scores, cited on the page where present
REPLICATES = "replicates.json"  # beside scores.json: each of the study's replicates, paired with the audit's


def run_infos(params: Params, runs: Path) -> dict[int, dict]:
    """Each replicate's run.json, checked present before any model loads."""
    infos = {}
    for r in params.audit.replicates:
        path = run_dir(runs, r) / "run.json"
        if not path.is_file():
            raise FrozenbridgeError(f"{path}: not found; train replicate {r} first (`dvc repro audit_train@{r}`)")
        infos[r] = json.loads(path.read_text())
    return infos


def training_summary(params: Params, infos: dict[int, dict], runs: Path) -> dict:
    """Per phase its steps and each replicate's final loss; per replicate its learning curve."""
    phases = {}
    for phase in ("stage1", "stage2"):
        ran = {r: info[phase] for r, info in infos.items() if info.get(phase) is not None}
        phases[phase] = None if not ran else {
            "steps": next(iter(ran.values()))["steps"],
            "final_loss": {str(r): p["final_loss"] for r, p in ran.items()}}
    return {**phases, "curves": {str(r): learning_curve(run_dir(runs, r) / "history.csv") for r in infos}}


def check(params: Params, folder: AuditFolder, features: Path, runs: Path, out_json: Path, answers: Path,
          figure: Path, shapes_scores: Path = SHAPES_SCORES) -> dict:
    """Every replicate answers every test question under the four conditions; compute every number; write
    audit.json (the numbers), answers.jsonl (every answer, one test question and replicate a line) and the figure."""
    feats = load_features(features, folder, params)
    infos = run_infos(params, runs)
    device = pick_device(params.device)
    e = params.audit.evaluate
    records: list[dict] = []
    lm = None
    for r in params.audit.replicates:
        saved = load_run(run_dir(runs, r) / "model", device, use_bf16(params.audit.train.precision, device), lm)
        lm = saved.model.lm
        records += answer_records(saved.model, folder, feats, params.audit.question_prompt, e.batch_size,
                                  answer_tokens(saved.model, folder, e.answer_tokens), r)
    train_questions = [{"picture": i, "question": q.question, "kind": q.kind, "answer": q.answer}
                       for i, p in enumerate(folder.train.pictures) for q in p.questions]
    checks = audit_numbers(records, train_questions, samples=e.bootstrap, seed=params.seed)
    probe = probe_kinds(feats.train, feats.test, feats.grid, train_questions, records, max_classes=e.probe_classes,
                        min_examples=e.probe_examples)
    first = infos[params.audit.replicates[0]]
    exported = (folder.root / EXPORTED).is_file()
    numbers = {"folder": folder.summary(),
               "settings": {"vision": params.vision.name, "language": params.language.name,
                            "stage1_steps": params.audit.train.stage1_steps,
                            "stage2_steps": params.audit.train.stage2_steps, "seed": params.seed,
                            "replicates": list(params.audit.replicates),
                            "precision": first["precision"], "device": first["device"], "margin": e.margin},
               "training": training_summary(params, infos, runs),
               "repeats": repeats(folder, feats.train, feats.test),
               "checks": checks, "probe": probe,
               "study_reference": study_reference(shapes_scores),
               "agreement": agreement(checks, Path(shapes_scores).with_name(REPLICATES)) if exported else None}
    write_json(out_json, numbers)
    with atomic_path(answers) as tmp:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
    with atomic_path(figure) as tmp:
        draw_audit(numbers, tmp)
    return numbers
