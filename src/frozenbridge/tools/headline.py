"""The headline numbers: a dozen medians over replicates, read from every study's metrics, that a person compares
across experiments (`dvc exp show` narrowed to metrics/headline.json), and the rows of the README's headline table.

Each row is computed from the metrics it names, and only when they are there: a recipe, tower or token count the
params did not run has no row, and a label names what the metrics hold (the token count of the digits adapter is
read from them, not assumed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frozenbridge.core.summary import read_json_if_present


@dataclass(frozen=True)
class Row:
    study: str
    key: str  # the name in metrics/headline.json, under the study
    label: str  # what it measures, for the README table
    median: float
    low: float  # the lowest and highest replicate (equal to the median for one model, or a count)
    high: float
    unit: str  # "%", "points", "of 1" (a fraction: accuracy, recall), "share" (a fraction shown as %), "of N"
    note: str = ""  # the statistics behind the number, said under the table rather than in the label


def _spread(s: dict) -> tuple[float, float, float]:
    return s["median"], s["min"], s["max"]


def shapes_rows(folder: Path) -> list[Row]:
    scores, paired = read_json_if_present(folder / "scores.json"), read_json_if_present(folder / "paired.json")
    rows: list[Row] = []
    if not scores:
        return rows

    def add(recipe: str, test: str, task: str, stat: str, key: str, label: str, unit: str) -> None:
        cell = scores.get(recipe, {}).get(test, {}).get(task)
        if cell is not None:
            rows.append(Row("shapes", key, label, *_spread(cell[stat]), unit))

    add("caption", "seen", "caption", "right", "caption_exact_seen",
        "captions exactly right, seen pairs (caption)", "%")
    add("caption", "heldout", "caption", "right", "caption_exact_heldout",
        "captions exactly right, held-out pairs (caption)", "%")
    add("caption_qa", "seen", "binding", "gap", "caption_qa_binding_gap_seen",
        "binding gap over the best control, seen pairs (caption_qa)", "points")
    add("caption_qa", "seen", "leftmost", "gap", "caption_qa_leftmost_gap_seen",
        "leftmost gap over the best control, seen pairs (caption_qa)", "points")
    add("caption_qa", "heldout", "binding", "right", "caption_qa_binding_heldout",
        "binding right, held-out pairs (caption_qa)", "%")
    add("qa", "heldout", "binding", "right", "qa_binding_heldout", "binding right, held-out pairs (qa)", "%")
    pair = (paired or {}).get("qa vs caption_qa", {}).get("heldout", {}).get("binding")
    if pair:  # qa behind caption_qa: caption_qa more right
        rows.append(Row("shapes", "caption_qa_ahead_heldout_binding",
                        "replicates where caption_qa got more held-out binding questions right than qa",
                        pair["behind"], pair["behind"], pair["behind"], f"of {pair['replicates']}",
                        f"caption_qa against qa on held-out binding questions, "
                        f"{_paired_evidence(pair, 'qa', 'caption_qa')}"))
    return rows


def _paired_evidence(pair: dict, first: str, second: str) -> str:
    """A paired.json cell, second minus first: the median, its exact interval with the coverage, the sign test, and
    a recipe named ahead only where `supported` names it."""
    iv = pair["interval"]
    low, high = sorted((-iv["low"], -iv["high"]))
    verdict = {"first": f"{first} ahead", "second": f"{second} ahead"}.get(pair["supported"],
                                                                          "no difference supported")
    def signed(v: float) -> str:
        return f"{v:+g}" if v else "0"
    return (f"{second} − {first}: median {signed(-pair['median_difference'])} of {pair['items']}, "
            f"{round(100 * iv['coverage'], 1):g}% interval [{signed(low)}, {signed(high)}], sign test p = "
            f"{pair['sign_test_p']:g}: {verdict}")


def digits_rows(folder: Path) -> list[Row]:
    adapter, cls = read_json_if_present(folder / "adapter.json"), read_json_if_present(folder / "classifier.json")
    rows: list[Row] = []
    if cls:
        rows.append(Row("digits", "classifier_accuracy", "the frozen classifier's test accuracy (the ceiling)",
                        cls["test_accuracy"], cls["test_accuracy"], cls["test_accuracy"], "of 1"))
    if adapter:
        for tokens in sorted(adapter["by_tokens"], key=int, reverse=True):
            t = adapter["by_tokens"][tokens]
            word = "token" if int(tokens) == 1 else "tokens"
            rows.append(Row("digits", f"adapter_{tokens}_{word}_accuracy",
                            f"test captions naming the right digit, adapter of {tokens} prefix {word}",
                            *_spread(t["accuracy"]), "of 1"))
    return rows


def retrieval_rows(folder: Path) -> list[Row]:
    towers = (read_json_if_present(folder / "recall.json") or {}).get("towers", {})
    labels = {"adaptor": "frozen LM + adaptor", "scratch": "text tower from scratch"}
    return [Row("retrieval", f"{tower}_long_heldout_r1", f"{label}: long captions of held-out pictures, image→text R@1",
                *_spread(towers[tower]["recall"]["heldout"]["long"]["image_to_text"]["R@1"]), "of 1")
            for tower, label in labels.items() if tower in towers]


def onetoken_rows(folder: Path) -> list[Row]:
    scores = read_json_if_present(folder / "scores.json")
    if not scores:
        return []
    med = scores["median"]
    share = [Row("onetoken", "share_of_gap", "share of the untrained-to-true-caption agreement gap closed",
                 *_spread(med["share_of_gap"]), "share")] if scores.get("available") and med.get("share_of_gap") else []
    return [*share, Row("onetoken", "exact", "test captions exactly right from the pooled vector",
                        *_spread(med["trained"]["exact"]), "%")]


def headline_rows(metrics: Path) -> list[Row]:
    return [*shapes_rows(metrics / "shapes"), *digits_rows(metrics / "digits"),
            *retrieval_rows(metrics / "retrieval"), *onetoken_rows(metrics / "onetoken")]


def headline(metrics: Path) -> dict:
    """{"headline": {study: {key: median}}}, what metrics/headline.json holds: `dvc exp show` names its columns
    headline.<study>.<key>, so `--keep '^headline\\.'` finds them all and nothing else."""
    out: dict = {}
    for r in headline_rows(metrics):
        out.setdefault(r.study, {})[r.key] = r.median
    return {"headline": out}
