"""The README's headline table and an other-backbone experiment's rows beside the default run, each row beside the
reference's number and its source: every cell computed from metrics/headline.json or a kept experiment's metrics.
"""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.digits.report import tables as digits
from frozenbridge.onetoken.report import tables as onetoken
from frozenbridge.retrieval.report import tables as retrieval
from frozenbridge.shapes.report import tables as shapes
from frozenbridge.tools.headline import Row, headline_rows, shapes_rows

STUDY_LABELS = {"onetoken": "one-token"}
REFERENCES = {"shapes": shapes.HEADLINE_REFERENCE, "digits": digits.HEADLINE_REFERENCE,
              "retrieval": retrieval.HEADLINE_REFERENCE, "onetoken": onetoken.HEADLINE_REFERENCE}

# Where each study's reference number comes from, and how its setup differs from the default run here
REFERENCE_SOURCES = {
    "shapes": "\"Teaching a Language Model to See\" (SigLIP-B/16 + Qwen2.5-0.5B; 400 caption and 400 question steps, "
              "three seeds, 120 test pictures and 100 questions a task)",
    "digits": "\"Image Captioning with Frozen Models\" (its own classifier and character LM on a small MNIST sample; "
              "an eight-token adapter, 24 epochs)",
    "retrieval": "LLM2CLIP (a large LLM fine-tuned to embed captions, on pretrained CLIP encoders; a few million "
                 "photo–caption pairs)",
    "onetoken": "\"Captioning with CLIP and Qwen\" (CLIP ViT-B/32 + Qwen3-0.6B-Base on 2,000 Flickr30k photos, "
                "three seeds)",
}


def _value(r: Row) -> str:
    """median [low–high] in the row's unit (a count of replicates as "k of n")."""
    def fmt(v: float) -> str:
        return f"{v:.3f}" if r.unit == "of 1" else f"{100 * v:.1f}" if r.unit == "share" else f"{v:g}"
    if r.unit.startswith("of ") and r.unit != "of 1":
        return f"{r.median:g} {r.unit}"
    suffix = "%" if r.unit in ("%", "share") else ""
    cell = f"{fmt(r.median)}{suffix}"
    return cell if r.low == r.high else f"{cell} [{fmt(r.low)}–{fmt(r.high)}]"


def measured_replicates(metrics: Path) -> int:
    """How many replicates the shapes metrics were made from (metrics/shapes/replicates.json: recipe -> pair set ->
    task -> replicate -> scores); 0 where there is no such file."""
    saved = read_json_if_present(metrics / "shapes" / "replicates.json") or {}
    return len({rep for recipe in saved.values() for tasks in recipe.values() for reps in tasks.values()
                for rep in reps})


def headline_table(root: Path) -> list[str]:
    """The README's headline: every row of metrics/headline.json, median [min–max] over the replicates the shapes
    metrics hold (params.yaml's count where they hold none; a mismatch is said), beside the reference's number."""
    rows = headline_rows(root / "metrics")
    if not rows:
        return ["No metrics yet: run `dvc repro`."]
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    named = len(params.get("replicates", []) or [])
    n = measured_replicates(root / "metrics") or named
    stale = f" (params.yaml now names {named}: `dvc repro` brings the metrics up to date)" if n != named else ""
    out = [f"Medians over {n} replicates{stale} [lowest–highest], from `metrics/headline.json` (all of them in "
           f"[docs/results.md](docs/results.md)); each reference's source and setup are named under the table:", "",
           "| study | measure | here | reference |", "|---|---|---:|---|"]
    for r in rows:
        ref = REFERENCES.get(r.study, {}).get(r.key, "—")
        out.append(f"| {STUDY_LABELS.get(r.study, r.study)} | {r.label} | {_value(r)} | {ref} |")
    notes = [r.note for r in rows if r.note]
    if notes:
        out += ["", f"Statistics: {'; '.join(notes)}."]
    studies = list(dict.fromkeys(r.study for r in rows if r.study in REFERENCE_SOURCES))
    return out + ["", "References, each study's source and its setup:", "",
                  *(f"- {STUDY_LABELS.get(s, s)}: {REFERENCE_SOURCES[s]}." for s in studies),
                  "", "The words are defined in [the glossary](docs/shapes.md#glossary)."]


BACKBONE_KEYS = ("language.name", "vision.name")  # an experiment that changed one is shown beside the default run


def backbone_table(folder: Path, root: Path) -> list[str]:
    """An experiment with another backbone (results/<name>/ whose params changed language.name or vision.name):
    every shapes headline row it has, median [lowest–highest] over its replicates, beside the default run's
    (metrics/shapes/, the backbones params.yaml names) and the reference's number for the same measure."""
    exp = read_json_if_present(folder / "experiment.json") or {}
    changed = {k: v for k, v in exp.get("params_changed", {}).items() if k in BACKBONE_KEYS}
    theirs = {r.key: r for r in shapes_rows(folder / "metrics" / "shapes")}
    if not changed or not theirs:
        return []
    ours = {r.key: r for r in shapes_rows(root / "metrics" / "shapes")}
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    default = " + ".join(str((params.get(part) or {}).get("name", "?")) for part in ("vision", "language"))
    named = ", ".join(f"{k} = {Path(str(v)).name}" for k, v in changed.items())
    out = [f"`{exp.get('name', folder.name)}` beside the default run ({default}, `metrics/shapes/`) and the "
           f"reference, {REFERENCE_SOURCES['shapes']}: median [lowest–highest] over each run's replicates.", "",
           f"| measure | default run | {named} | reference |", "|---|---:|---:|---|"]
    for key, r in theirs.items():
        mine = _value(ours[key]) if key in ours else "—"
        out.append(f"| {r.label} | {mine} | {_value(r)} | {REFERENCES['shapes'].get(key, '—')} |")
    return out + [""]
