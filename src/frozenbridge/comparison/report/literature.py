"""The connector comparison beside what the cited papers report for the same designs: for each design of a view, its
median paired difference from the MLP on section 9's cells (computed from the replicates), the papers' finding
(quoted with its source: these are the papers' numbers, not ours), and whether the gap here lies within the few
points the papers' gaps span (FEW_POINTS, declared before any run) or beyond. Then what differs at this scale, from
params.yaml and the runs' own facts."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present

FEW_POINTS = 5.0  # exact-match points: a gap of at most this is "a few points", as the papers' connector gaps are

# design prefix -> (cells (test, task) as section 9's claims read them, what the papers report)
PAPERS: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {
    "resampler": ((("seen", "caption"), ("heldout", "binding")),
                  "Idefics2 (§3.3) found learned pooling from 729 visual tokens to 64 raised its average by 8.5 "
                  "points; MM1 (§3.2) found the type of connector mattered little beside the number of visual tokens "
                  "and the resolution"),
    "cross_attention": ((("heldout", "binding"), ("seen", "caption"), ("heldout", "caption")),
                        "Idefics2 (Finding 2) found cross-attention ahead of putting the picture into the sequence "
                        "while both backbones stay frozen, and behind once they are trained"),
    "codebook": ((("seen", "caption"), ("heldout", "binding")),
                 "Chameleon trains one model on codebook tokens from the start; with a small frozen language model, "
                 "discrete tokens are reported behind continuous features"),
}
RECIPE = {"caption": "caption", "count": "caption_qa", "binding": "caption_qa", "leftmost": "caption_qa"}


def _gap(mine: dict, mlp: dict) -> list[float]:
    return [round(mine[r]["right"] - mlp[r]["right"], 2) for r in sorted(mine, key=int) if r in mlp]


def design_line(setting: str, paired_cells: dict[tuple[str, str], list[float]], finding: str) -> str:
    """One design: its gaps on the cells, the papers' finding, and where its gaps lie against FEW_POINTS."""
    parts, within = [], []
    for (test, task), diffs in paired_cells.items():
        median = statistics.median(diffs)
        parts.append(f"{'held-out' if test == 'heldout' else test} {task} {median:+.4g} "
                     f"[{min(diffs):+.4g}, {max(diffs):+.4g}]")
        within.append(abs(median) <= FEW_POINTS)
    where = ("every median within" if all(within) else "no median within" if not any(within)
             else f"{sum(within)} of {len(within)} medians within")
    n = len(next(iter(paired_cells.values())))
    return (f"- **{setting}** against the MLP, exact-match points (median [lowest, highest] over "
            f"{n} paired replicate{'s' if n != 1 else ''}): {'; '.join(parts)}: {where} the "
            f"{FEW_POINTS:g} points the papers' connector gaps span. The papers: {finding}.")


def literature_lines(root: Path, found: dict, partner_of) -> list[str]:
    """The view's designs beside the papers (`found`: report.connectors.designs; `partner_of(found, setting)` names
    each design's MLP), then what differs at this scale; [] where no design pairs with its MLP yet."""
    from frozenbridge.comparison.report.tables import per_replicate

    lines = []
    for setting in found:
        prefix = next((p for p in PAPERS if setting.startswith(p)), None)
        mlp = partner_of(found, setting) if prefix else None
        if prefix is None or mlp not in found:
            continue
        cells = {}
        for test, task in PAPERS[prefix][0]:
            mine, theirs = (per_replicate(found[name][1], RECIPE[task], test, task) for name in (setting, mlp))
            if diffs := _gap(mine, theirs):
                cells[(test, task)] = diffs
        if cells:
            lines.append(design_line(setting, cells, PAPERS[prefix][1]))
    if not lines:
        return []
    return ["**Against the papers.**", "", *lines, "", scale_sentence(root, found)]


def scale_sentence(root: Path, found: dict) -> str:
    """What differs here from the papers' setting, from params.yaml and the designs' own facts."""
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    language = ((params or {}).get("language") or {}).get("name", "the language model")
    vision = ((params or {}).get("vision") or {}).get("name", "the encoder")
    trained = sorted(facts["connector_params"] for facts, _ in found.values() if facts.get("connector_params"))
    size = f"{trained[0]:,}–{trained[-1]:,} parameters trained" if trained else "a connector trained"
    steps = sorted(run["steps"] for _, metrics in found.values()
                   for run in (read_json_if_present(metrics / "stage1.json") or {}).values() if "steps" in run)
    span = f", after {steps[0]:,}–{steps[-1]:,} steps of stage 1" if steps else ""
    return (f"What differs at this scale: the language model is {language} and the encoder {vision}, both frozen, with "
            f"{size}; the pictures are generated shapes, and the score is exact match on captions and short "
            f"answers{span}. The papers train on millions of image-text pairs, with language models of billions of "
            "parameters, and score open benchmarks.")
