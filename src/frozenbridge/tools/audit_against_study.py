"""What moves an audit's gaps away from the shapes study's on the same pictures: each difference between the two
instruments, measured as the points it moves each gap by.

The shapes study scores a run on the first 60 items of each task and test set, showing as the wrong picture another
item's of the same task and test set; until issue 69 the audit scored every test question and showed the picture half
the mixed seen + held-out list away (a held-out picture's wrong picture was a seen one). This command asks trained
runs (the study's caption_qa runs, the audit's runs: any saved run on the shapes encoder's features) the shapes
study's test questions under a ladder of protocols, from the audit's old one to the study's, one difference a rung:

    audit_before   every question, the wrong picture half the mixed list away, lower-cased, one generation call
    wrong_within   the wrong picture within the test set and kind (the study's rule)
    first_60       only the first 60 questions of each kind and test set (the study's items)
    trimmed        answers compared trimmed only, not lower-cased (the study's rule)
    study          4 answer tokens, one generation call per test set: the study's own protocol

The rung `study` reproduces the study's scores.json exactly; `audit_before` the audit's old answers. Writes one JSON:
per run and rung, each test set and kind's scores under the four conditions and the gap.

    python -m frozenbridge.tools.audit_against_study --run study/0=runs/shapes/caption_qa/0/model \\
        --run audit/0=runs/audit/0/model --run before/0=OLD/runs/audit/model \\
        --out results/audit-against-study/rungs.json

Runs are grouped by their name's part before '/': `before` (an audit run trained by the code before issue 69, from
the audit's own seed stream), `audit` (the audit's replicates, from the study's seed streams) and `study` (the
study's caption_qa replicates). docs/audit.md reads the ladder (tools.audit_ladder): each line's move over the line
before is what one difference is worth.
"""

from __future__ import annotations

import argparse
import logging
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from frozenbridge.bridge.ask import generate_once
from frozenbridge.bridge.saved_run import load_run
from frozenbridge.core.atomic import write_json
from frozenbridge.core.controls import CONDITIONS, Asked, asked_in_groups, gap, percent, shown
from frozenbridge.core.device import pick_device
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.precision import use_bf16
from frozenbridge.core.stage import run_cli
from frozenbridge.shapes.data.vocab import QUESTION_TASKS, TEST_SPLITS, question_prompt
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import DATA
from frozenbridge.shapes.training.split_data import SplitData, load_blank, load_split
from frozenbridge.tools.audit_ladder import GAPS, LADDER, ladder

log = logging.getLogger("frozenbridge.tools")
SIDES = tuple(TEST_SPLITS)  # seen, heldout


@dataclass(frozen=True)
class Protocol:
    name: str
    wrong: str  # "mixed": half the seen + held-out list away; "within": within the test set and kind
    items: int | None  # the first n questions of each test set and kind; None: every one
    match: str  # "lower": trimmed and lower-cased; "strip": trimmed only
    tokens: int | None  # answer tokens; None: the longest true answer's tokens plus two
    calls: str  # "one": every test picture in one generation call; "per_set": one call per test set


RUNGS = (Protocol("audit_before", "mixed", None, "lower", None, "one"),
         Protocol("wrong_within", "within", None, "lower", None, "one"),
         Protocol("first_60", "within", 60, "lower", None, "one"),
         Protocol("trimmed", "within", 60, "strip", None, "one"),
         Protocol("study", "within", 60, "strip", 4, "per_set"))


def questions(split: SplitData, limit: int | None) -> dict[str, list[tuple[int, str, str]]]:
    """Per kind, the (picture, prompt, answer) of its questions in picture order, the first `limit` of each."""
    out: dict[str, list] = {t: [] for t in QUESTION_TASKS}
    for pic, qs in enumerate(split.questions):
        for q in qs:
            if limit is None or len(out[q["type"]]) < limit:
                out[q["type"]].append((pic, question_prompt(q["question"]), q["answer"]))
    return out


def asked(tests: dict[str, SplitData], p: Protocol) -> dict[tuple[str, str], list[Asked]]:
    """Per (test set, kind), its items with their wrong pictures, rows numbered across the sets (seen first)."""
    offset = {"seen": 0, "heldout": len(tests["seen"].questions)}
    total = offset["heldout"] + len(tests["heldout"].questions)
    groups = {(side, kind): [(offset[side] + pic, prompt, answer) for pic, prompt, answer in rows]
              for side in SIDES for kind, rows in questions(tests[side], p.items).items()}
    if p.wrong == "within":
        return asked_in_groups(groups)
    half = lambda r: (r + total // 2) % total if (r + total // 2) % total != r else (r + 1) % total  # noqa: E731
    return {key: [Asked(r, prompt, answer, half(r)) for r, prompt, answer in rows] for key, rows in groups.items()}


def answers(vlm, tests: dict[str, SplitData], blank: torch.Tensor, p: Protocol, batch_size: int) -> dict:
    """{(test set, kind): {condition: answers}} under protocol p."""
    items = asked(tests, p)
    rows = {key: [a for a in its] for key, its in items.items()}
    tokens = p.tokens or 2 + max(len(vlm.tokens.ids(" " + a.target)) for its in items.values() for a in its)
    feats = torch.cat([tests["seen"].feats, tests["heldout"].feats])
    blank_row = len(feats)
    feats = torch.cat([feats, blank.to(feats.dtype)])
    said: dict = {}
    if p.calls == "one":
        keys = [(shown(a, c, blank_row), a.prompt) for its in rows.values() for a in its for c in CONDITIONS]
        said = generate_once(vlm, keys, feats, batch_size, tokens, f"{p.name}")
        return {key: {c: [said[(shown(a, c, blank_row), a.prompt)] for a in its] for c in CONDITIONS}
                for key, its in rows.items()}
    out = {}
    start = 0
    for side in SIDES:  # the study's call: the set's own rows and the blank after them
        n = len(tests[side].questions)
        own = torch.cat([feats[start:start + n], blank.to(feats.dtype)])
        local = lambda r: None if r is None else n if r == blank_row else r - start  # noqa: E731
        keys = [(local(shown(a, c, blank_row)), a.prompt) for kind in QUESTION_TASKS for a in rows[(side, kind)]
                for c in CONDITIONS]
        said = generate_once(vlm, keys, own, batch_size, tokens, f"{p.name} {side}")
        for kind in QUESTION_TASKS:
            out[(side, kind)] = {c: [said[(local(shown(a, c, blank_row)), a.prompt)] for a in rows[(side, kind)]]
                                 for c in CONDITIONS}
        start += n
    return out


def cells(items: dict, said: dict, match: str) -> dict:
    """{test set: {kind: scores under each condition, gap, n}}."""
    right = (lambda s, t: s.strip().lower() == t.strip().lower()) if match == "lower" else \
        (lambda s, t: s.strip() == t.strip())
    out: dict = {side: {} for side in SIDES}
    for (side, kind), its in items.items():
        scores = {c: percent(sum(right(s, a.target) for s, a in zip(said[(side, kind)][c], its)), len(its))
                  for c in CONDITIONS}
        out[side][kind] = {**scores, "gap": gap(scores), "n": len(its)}
    return out


def same_inputs(data: Path, audit_features: Path, params_path: Path) -> dict[str, bool]:
    """Whether the audit's inputs are the study's: its features of the blank, test and training pictures, bit for bit
    (the exported folder's test pictures are the seen then the held-out ones), and its prompts (params.yaml's)."""
    from frozenbridge.audit.params import load_params as audit_params
    from frozenbridge.core.feature_cache import load_feature_tensor
    from frozenbridge.shapes.data.vocab import caption_prompt

    study = {name: load_feature_tensor(data / "features" / f"{name}.parquet")[1]
             for name in ("blank", "train", "test_seen", "test_heldout")}
    audit = {name: load_feature_tensor(audit_features / f"{name}.parquet")[1] for name in ("blank", "train", "test")}
    question = "What color is the circle?"
    prompts = audit_params(params_path).audit
    return {"blank": torch.equal(audit["blank"], study["blank"]), "train": torch.equal(audit["train"], study["train"]),
            "test": torch.equal(audit["test"], torch.cat([study["test_seen"], study["test_heldout"]])),
            "prompts": prompts.prompts.caption == caption_prompt()
            and prompts.question_prompt(question) == question_prompt(question)}


def measure(runs: dict[str, Path], data: Path, params_path: Path, batch_size: int,
            audit_features: Path | None = None) -> dict:
    params = load_params(params_path)
    tests = {side: load_split(split, data / "pictures", data / "features", params.vision)
             for side, split in TEST_SPLITS.items()}
    blank = load_blank(data / "features", params.vision)
    device = pick_device(params.device)
    bf16 = use_bf16(params.shapes.train.precision, device)
    lm = None
    out: dict = {"machine": machine(), "rungs": [asdict(p) for p in RUNGS], "runs": {},
                 "same_inputs": None if audit_features is None else same_inputs(data, audit_features, params_path)}
    for name, path in runs.items():
        saved = load_run(path, device, bf16, lm)
        lm = saved.model.lm
        out["runs"][name] = {}
        for p in rungs_for(name.split("/")[0]):
            items = asked(tests, p)
            out["runs"][name][p.name] = cells(items, answers(saved.model, tests, blank, p, batch_size), p.match)
            log.info("%s %s: %s", name, p.name, ", ".join(
                f"{side} {kind} {out['runs'][name][p.name][side][kind]['gap']}" for side, kind in GAPS))
    out["medians"] = medians(out["runs"])
    out["ladder"] = ladder(out)
    return out


def machine() -> dict:
    """Which machine asked: its CPU model, how it runs bf16, the allocator and the day."""
    import time

    from frozenbridge.tools.repro_timing import bf16_path, cpu_model, malloc

    return {"cpu_model": cpu_model(), "bf16_path": bf16_path(), "allocator": malloc(),
            "date": time.strftime("%Y-%m-%d")}


def rungs_for(group: str) -> list[Protocol]:
    """The rungs a group of runs is asked under: those the ladder reads it at, every rung for a group it does not
    name."""
    named = {rung for g, rung, _ in LADDER if g == group}
    return [p for p in RUNGS if p.name in named] if named else list(RUNGS)


def medians(runs: dict) -> dict:
    """Per group of runs (the name before '/'), rung, and each of the four gaps: the median over its runs."""
    groups: dict[str, list[str]] = {}
    for name in runs:
        groups.setdefault(name.split("/")[0], []).append(name)
    return {g: {p.name: {f"{side} {kind}": statistics.median(runs[n][p.name][side][kind]["gap"] for n in names)
                         for side, kind in GAPS} for p in rungs_for(g)} for g, names in groups.items()}


def parse_run(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not Path(path, "config.json").is_file():
        raise FrozenbridgeError(f"--run {text!r}: expected NAME=PATH, PATH a saved run (a folder with config.json)")
    return name, Path(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", required=True, type=str,
                    help="NAME=PATH: a saved run to ask (NAME's part before '/' groups runs for the medians)")
    ap.add_argument("--data", type=Path, default=DATA, help=f"the shapes study's pictures/ and features/ ({DATA})")
    ap.add_argument("--params", type=Path, default=Path("params.yaml"))
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--audit-features", type=Path, default=None,
                    help="the audit's features of the exported folder (data/audit/features), compared bit for bit with "
                         "the study's")
    ap.add_argument("--out", type=Path, required=True, help="the JSON to write")
    args = ap.parse_args()
    runs = dict(parse_run(r) for r in args.run)
    write_json(args.out, measure(runs, args.data, args.params, args.batch_size, args.audit_features))


if __name__ == "__main__":
    run_cli(main)
