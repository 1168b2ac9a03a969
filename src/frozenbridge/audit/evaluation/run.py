"""The audit's check (the audit_check stage, and `frozenbridge audit`'s last step): the trained run answers every test
question under the four conditions, every number is computed from those answers and the features, and the page is
written from the numbers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from frozenbridge.audit.data.features import load_features
from frozenbridge.audit.data.folder import AuditFolder
from frozenbridge.audit.evaluation.agreement import EXPORTED, agreement, study_reference
from frozenbridge.audit.evaluation.answers import answer_records, answer_tokens
from frozenbridge.audit.evaluation.checks import audit_numbers
from frozenbridge.audit.evaluation.probe import probe_kinds
from frozenbridge.audit.params import Params
from frozenbridge.audit.summary.figure import draw_audit
from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.device import pick_device
from frozenbridge.core.precision import use_bf16

log = logging.getLogger("frozenbridge.audit")
SHAPES_SCORES = Path("metrics/shapes/scores.json")  # the shapes study's scores, cited on the page where present


def check(params: Params, folder: AuditFolder, features: Path, run: Path, out_json: Path, answers: Path,
          figure: Path, shapes_scores: Path = SHAPES_SCORES) -> dict:
    """Answer every test question under the four conditions, compute every number; write audit.json (the numbers),
    answers.jsonl (every answer, one test question a line) and the figure."""
    feats = load_features(features, folder, params)
    info = json.loads((Path(run) / "run.json").read_text())
    device = pick_device(params.device)
    saved = load_run(Path(run) / "model", device, use_bf16(params.audit.train.precision, device))
    e = params.audit.evaluate
    records = answer_records(saved.model, folder, feats, params.audit.question_prompt, e.batch_size,
                             answer_tokens(saved.model, folder, e.answer_tokens))
    train_questions = [{"picture": i, "question": q.question, "kind": q.kind, "answer": q.answer}
                       for i, p in enumerate(folder.train.pictures) for q in p.questions]
    checks = audit_numbers(records, train_questions, samples=e.bootstrap, seed=params.seed)
    probe = probe_kinds(feats.train, feats.test, feats.grid, train_questions, records, max_classes=e.probe_classes,
                        min_examples=e.probe_examples)
    numbers = {"folder": folder.summary(),
               "settings": {"vision": params.vision.name, "language": params.language.name,
                            "stage1_steps": params.audit.train.stage1_steps,
                            "stage2_steps": params.audit.train.stage2_steps, "seed": params.seed,
                            "precision": info["precision"], "device": info["device"], "margin": e.margin},
               "training": {"stage1": info["stage1"], "stage2": info["stage2"]},
               "checks": checks, "probe": probe,
               "study_reference": study_reference(shapes_scores),
               "agreement": agreement(checks, shapes_scores) if (folder.root / EXPORTED).is_file() else None}
    write_json(out_json, numbers)
    with atomic_path(answers) as tmp:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
    with atomic_path(figure) as tmp:
        draw_audit(numbers, tmp)
    return numbers
