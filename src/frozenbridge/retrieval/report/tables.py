"""The retrieval study's report tables, from metrics/retrieval/, beside LLM2CLIP's numbers."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.summary import read_all
from frozenbridge.retrieval.data.texts import LENGTHS
from frozenbridge.retrieval.summary.replicates import KS, TEST_LABELS, TOWER_LABELS, WAYS
from frozenbridge.shapes.interface import TESTS

# llm2clip-paper-summary (the reference): recall gains (points) of LLM2CLIP over SigLIP-2, image->text / text->image
REFERENCE_GAIN = {"short": (1.0, 1.9), "long": (14.8, 15.8)}
HEADLINE_REFERENCE = {"adaptor_long_heldout_r1": f"LLM2CLIP − SigLIP-2 on long captions: +{REFERENCE_GAIN['long'][0]} "
                                                 "points (a gain, not a recall)"}


def _cell(s: dict) -> str:
    return f"{s['median']:.3f}" if s["min"] == s["max"] else f"{s['median']:.3f} [{s['min']:.3f}–{s['max']:.3f}]"


def recall_table(m: dict) -> list[str]:
    rows = ["| captions | test pictures | text tower (trainable parameters) | image→text R@1 | R@5 | text→image R@1 "
            "| R@5 |", "|---|---|---|---:|---:|---:|---:|"]
    for length in LENGTHS:
        for test in TESTS:
            for tower, t in m["towers"].items():
                cells = [_cell(t["recall"][test][length][way][k]) for way in WAYS for k in KS]
                rows.append(f"| {length} | {TEST_LABELS[test]} | {TOWER_LABELS[tower]} ({t['trainable']:,}) | "
                            + " | ".join(cells) + " |")
            chance = [f"{m['chance'][test][length][way][k]:.3f}" for way in WAYS for k in KS]
            rows.append(f"| {length} | {TEST_LABELS[test]} | *chance (a random ranking)* | "
                        + " | ".join(chance) + " |")
    return rows


def gain_table(m: dict) -> list[str]:
    """The reference's claim in our numbers: frozen LM + adaptor minus the from-scratch tower, R@1 points."""
    towers = m["towers"]
    if not {"adaptor", "scratch"} <= set(towers):
        return []
    rows = ["| captions | test pictures | adaptor − from scratch, image→text R@1 (points) | text→image | reference "
            "(LLM2CLIP − SigLIP-2, both ways) |", "|---|---|---:|---:|---|"]
    for length in LENGTHS:
        for test in TESTS:
            d = [100 * (towers["adaptor"]["recall"][test][length][way]["R@1"]["median"]
                        - towers["scratch"]["recall"][test][length][way]["R@1"]["median"]) for way in WAYS]
            ref = REFERENCE_GAIN[length]
            rows.append(f"| {length} | {TEST_LABELS[test]} | {d[0]:+.1f} | {d[1]:+.1f} | +{ref[0]} / +{ref[1]} |")
    return rows


POOL_LABELS = {"mean": "the mean of its last hidden states over the caption's tokens",
               "last": "its last hidden state at the caption's last token"}


def _overlap(a: dict, b: dict) -> str:
    """How two min–max ranges stand: "ahead" (a's lowest above b's highest), "behind", or "overlap"."""
    return "ahead" if a["min"] > b["max"] else "behind" if a["max"] < b["min"] else "overlap"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:+.1f}" if lo == hi else f"{lo:+.1f} to {hi:+.1f}"


def reading(m: dict) -> str:
    """Computed sentences on the reference's claim: where the frozen LM + adaptor stands against the from-scratch
    tower, cell by cell (medians, and whether the replicates' ranges separate them), and whether its difference is
    larger on long captions than on short ones, as the reference found."""
    towers = m["towers"]
    if not {"adaptor", "scratch"} <= set(towers):
        return ""
    r1 = {tower: {(length, test, way): towers[tower]["recall"][test][length][way]["R@1"]
                  for length in LENGTHS for test in TESTS for way in WAYS} for tower in ("adaptor", "scratch")}
    cells = {key: 100 * (a["median"] - r1["scratch"][key]["median"]) for key, a in r1["adaptor"].items()}
    stand = [_overlap(a, r1["scratch"][key]) for key, a in r1["adaptor"].items()]
    ahead, tied, behind = (sum(d > 0 for d in cells.values()), sum(d == 0 for d in cells.values()),
                           sum(d < 0 for d in cells.values()))
    by_length = {length: [d for (n, _, _), d in cells.items() if n == length] for length in LENGTHS}
    text = (f"Reading: by median, the frozen LM + adaptor is ahead of the tower trained from scratch in {ahead} of "
            f"{len(cells)} recall@1 cells, behind in {behind} and level in {tied}. By range, its lowest replicate is "
            f"above the other's highest in {stand.count('ahead')}, its highest below the other's lowest in "
            f"{stand.count('behind')}, and the two ranges overlap in {stand.count('overlap')}. The median "
            "difference is " + _and([f"{_span(d)} points on {length} captions" for length, d in by_length.items()])
            + ".")
    if not {"long", "short"} <= set(by_length):
        return text
    long_mean, short_mean = (sum(by_length[n]) / len(by_length[n]) for n in ("long", "short"))
    if long_mean > short_mean:
        verdict = "here too the difference is larger on long captions"
    elif long_mean < short_mean:
        verdict = "here the difference is smaller on long captions than on short ones"
    else:
        verdict = "here it is the same on long and short captions"
    return (text + f" The reference found its largest gains on long captions; {verdict} (mean {long_mean:+.1f} "
            f"against {short_mean:+.1f} points).")


def phrasing_table(m: dict) -> list[str]:
    rows = ["| text side | seen pictures' captions | held-out pictures' captions |", "|---|---:|---:|"]
    before = m["phrasing_before"]
    if "lm" in before:
        rows.append("| frozen LM, its raw vector (before any tower) | "
                    + " | ".join(f"{before['lm'][t]:.3f}" for t in TESTS) + " |")
    if "vision_text" in before:
        rows.append("| vision model's text tower, raw | " + " | ".join(f"{before['vision_text'][t]:.3f}"
                                                                   for t in TESTS) + " |")
    for tower, t in m["towers"].items():
        rows.append(f"| {TOWER_LABELS[tower]}, trained | " + " | ".join(_cell(t["phrasing"][test]) for test in TESTS)
                    + " |")
    return rows


def retrieval_results(metrics: Path) -> list[str]:
    if (found := read_all(metrics / "retrieval", "embed.json", "recall.json")) is None:
        return []
    embed, m = found
    lang = embed["language"]
    return [f"**Retrieval study** (`metrics/retrieval/`): {embed['texts']:,} distinct captions embedded once by the "
            f"frozen {lang['name']} ({POOL_LABELS.get(lang['pool'], lang['pool'])}, {lang['width']} numbers). Each "
            "picture is the encoder's cached features averaged over the grid, through one trained linear layer; every "
            "tower trained on the same contrastive loss and batches. Recall median [min–max] over replicates:", "",
            *recall_table(m), "",
            "The reference's claim, in our numbers (recall@1 points of the frozen LM + adaptor over the tower "
            "trained from scratch, medians):", "", *gain_table(m), "", reading(m), "",
            "Phrasing diagnostic: how often a test scene's left-to-right caption and its right-to-left one are each "
            "other's nearest (top-1, both ways averaged):", "", *phrasing_table(m), "",
            "![retrieval recall@1](plots/retrieval/recall.png)", ""]
