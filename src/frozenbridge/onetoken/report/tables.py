"""The one-token study's report tables, from metrics/onetoken/ (and the main study's caption scores beside them),
next to the reference's numbers. Every label is read from the metrics, or, where they do not record it (the prefix
tokens; the main study's captions a test set), from params.yaml beside metrics/ through the studies' params; a
label with neither says so rather than guess."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from frozenbridge.core.config import field
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.summary import read_all, read_json_if_present
from frozenbridge.onetoken.params import Params as OneTokenStudyParams
from frozenbridge.shapes.interface import TEST_SPLITS, ShapesParams

# clip-qwen-photo-captioning (the reference): CLIP ViT-B/32 -> one token -> Qwen3-0.6B, 2,000 Flickr30k pairs, 3 seeds
REFERENCE = {"floor": 0.1897, "trained": 0.2125, "ceiling": 0.3280, "share": (0.282, 0.126, 0.086),
             "own_nearest": 60.9, "pictures": 2000, "chance": 0.05, "matched": 0.3268, "mismatched": 0.1668}
KIND_LABELS = {"floor": "untrained connector (floor)", "trained": "trained connector"}
REFERENCE_SHARE = (REFERENCE["trained"] - REFERENCE["floor"]) / (REFERENCE["ceiling"] - REFERENCE["floor"])
HEADLINE_REFERENCE = {"share_of_gap": f"{REFERENCE_SHARE:.1%} (CLIP + Qwen3-0.6B, Flickr30k)"}


@dataclass(frozen=True)
class _Params(OneTokenStudyParams):
    """The one-token study's params and the shapes section: the keys the labels need that the metrics lack."""
    shapes: ShapesParams = field(ShapesParams())


@dataclass(frozen=True)
class Labels:
    """What the tables name: this study's prefix tokens; the main study's image tokens, grid and captions a test
    set (None: not recorded anywhere the report reads)."""
    prefix_tokens: int | None = None
    grid_tokens: int | None = None
    grid: tuple[int, int] | None = None
    captions: dict[str, int] | None = None  # test set -> captions scored


def _params(metrics: Path) -> _Params | None:
    path = metrics.parent / "params.yaml"
    if not path.is_file():
        return None
    try:
        return _Params.load(path)
    except FrozenbridgeError:
        return None


def labels(m: dict, metrics: Path) -> Labels:
    """The labels from the metrics where they hold them (scores.json's prefix_tokens, each replicate's; the shapes
    study's text.json, encode.json and data.json), else from params.yaml."""
    params = _params(metrics)
    reps = {r.get("prefix_tokens") for r in m.get("replicates", {}).values()}
    tokens = m.get("prefix_tokens") or (reps.pop() if len(reps) == 1 and None not in reps else None)
    if tokens is None and params is not None:
        tokens = params.onetoken.prefix_tokens
    shapes = metrics / "shapes"
    one = ((read_json_if_present(shapes / "text.json") or {}).get("positions") or {}).get("one picture and text")
    shape = (read_json_if_present(shapes / "encode.json") or {}).get("output_shape") or []
    data = read_json_if_present(shapes / "data.json") or {}
    captions = None
    if params is not None and all(split in data for split in TEST_SPLITS.values()):
        captions = {test: min(params.shapes.evaluate.items, data[split]["pictures"])
                    for test, split in TEST_SPLITS.items()}
    return Labels(tokens, one["from_pictures"] if one else None, tuple(shape[:2]) if len(shape) == 3 else None,
                  captions)


def tokens_label(n: int | None) -> str:
    """"one token", "4 tokens"; "the prefix tokens" when the count is not recorded."""
    return "the prefix tokens" if n is None else "one token" if n == 1 else f"{n} tokens"


def _cell(s: dict, fmt: str = "{:.4f}") -> str:
    if s["min"] == s["max"]:
        return fmt.format(s["median"])
    return f"{fmt.format(s['median'])} [{fmt.format(s['min'])} to {fmt.format(s['max'])}]"


def agreement_table(m: dict) -> list[str]:
    med = m["median"]
    rows = ["| captions | agreement here (median [min–max]) | reference (CLIP agreement, mean of 3 seeds) |",
            "|---|---:|---:|"]
    for kind in ("floor", "trained"):
        rows.append(f"| {KIND_LABELS[kind]} | {_cell(med[kind]['agreement'])} | {REFERENCE[kind]:.4f} |")
    rows.append(f"| the folder's own captions (ceiling) | {m['ceiling']:.4f} | {REFERENCE['ceiling']:.4f} |")
    share = med.get("share_of_gap")
    ref = ", ".join(f"{s:.1%}" for s in REFERENCE["share"])
    rows.append(f"| share of the floor-to-ceiling gap closed | {_cell(share, '{:.1%}') if share else '—'} | "
                f"{ref} (one per seed) |")
    return rows


def alignment_table(m: dict) -> list[str]:
    a, r = m["alignment"], REFERENCE
    return ["| alignment check of the scoring space | here | reference (CLIP) |", "|---|---:|---:|",
            f"| own caption nearest | {a['own_nearest']:.1f}% of {a['pictures']} (chance {a['chance']:.1f}%) | "
            f"{r['own_nearest']}% of {r['pictures']:,} (chance {r['chance']}%) |",
            f"| mean similarity, matched pair | {a['matched']:.4f} | {r['matched']} |",
            f"| mean similarity, mismatched | {a['mismatched']:.4f} | {r['mismatched']} |"]


def tokens_table(m: dict, shapes: dict | None, lab: Labels | None = None) -> list[str]:
    """The pooled vector -> the prefix tokens against the main study's image tokens (caption recipe), on the same
    captions; every count in a label from `lab`."""
    lab = lab or Labels()
    med = m["median"]["trained"]
    reps = list(m["replicates"].values())
    rows = ["| arrangement | exact captions, seen pairs | held-out pairs | distinct captions |", "|---|---:|---:|---:|"]

    def by_set(name: str) -> str:
        values = [r["trained"]["by_set"][name]["exact"] for r in reps if name in r["trained"]["by_set"]]
        return f"{statistics.median(values):.1f}%" if values else "—"

    rows.append(f"| {tokens_label(lab.prefix_tokens)} from the pooled vector (this study, {m['pictures']} test "
                f"pictures) | {by_set('seen')} | {by_set('heldout')} | {med['distinct']['median']:g} of "
                f"{m['pictures']} |")
    floor = m["median"]["floor"]["distinct"]["median"]
    rows.append(f"| the same, untrained | — | — | {floor:g} of {m['pictures']} |")
    if shapes and "caption" in shapes:
        c = shapes["caption"]
        exact = [c[test]["caption"]["right"]["median"] for test in ("seen", "heldout")]
        distinct = [c[test]["distinct_captions"]["median"] for test in ("seen", "heldout")]
        grid = f" from the {lab.grid[0]}×{lab.grid[1]} grid" if lab.grid else ""
        made = f"{lab.grid_tokens} image tokens{grid}" if lab.grid_tokens else f"the image tokens{grid}"
        sets = lab.captions or {}
        each = (f", {sets['seen']} pictures a test set" if len(set(sets.values())) == 1 and "seen" in sets
                else f", {sets['seen']} seen and {sets['heldout']} held-out pictures" if sets else "")
        total = f" of {sum(sets.values())}" if sets else ""
        rows.append(f"| {made} (main study, `caption` recipe{each}) | {exact[0]:.1f}% | {exact[1]:.1f}% | "
                    f"{distinct[0]:g} + {distinct[1]:g}{total} |")
    return rows


def _share_clause(share: dict) -> str:
    lo, mid, hi = share["min"], share["median"], share["max"]
    if lo > 0:
        return f"{mid:.0%} of the gap, on every replicate (replicates {lo:.0%} to {hi:.0%})"
    if hi <= 0:
        return f"none of the gap (replicates {lo:.0%} to {hi:.0%})"
    return f"{mid:.0%} of the gap, but not on every replicate (replicates {lo:.0%} to {hi:.0%})"


def reading(m: dict, shapes: dict | None, lab: Labels | None = None, folder: str | None = None) -> str:
    """Computed sentences: how far training moves agreement, against the reference's share; what space measured it;
    this study's exact captions against the main study's. Each comparison's words follow its numbers."""
    lab = lab or Labels()
    med, ref = m["median"], REFERENCE
    floor, trained, share = med["floor"]["agreement"]["median"], med["trained"]["agreement"]["median"], \
        med["share_of_gap"]
    ref_share = (ref["trained"] - ref["floor"]) / (ref["ceiling"] - ref["floor"])
    a = m["alignment"]
    if share is None:
        closed = "the floor and the ceiling are level, so no share of the gap can be taken"
    else:
        side = ("more than" if share["median"] > ref_share else "less than" if share["median"] < ref_share
                else "as much as")
        closed = (f"closing {_share_clause(share)}, {side} the {ref_share:.0%} the reference closed in CLIP's space on "
                  "photographs")
    space = (f"this space is {m['scorer']}, trained on the shapes study's training captions"
             if str(m["scorer"]).startswith("the retrieval study's")
             else f"this space is {m['scorer']}, on {f'`{folder}`' if folder else 'this folder'}'s pictures")
    text = (f"Reading: training moves agreement from {floor:.4f} to {trained:.4f} against {m['ceiling']:.4f} for the "
            f"true captions, {closed}. The two shares are not one measurement: {space}. A picture's own caption "
            f"is its nearest in that space {a['own_nearest']:.0f}% of the time (chance {a['chance']:g}%; the "
            f"reference's CLIP: {ref['own_nearest']}% of {ref['pictures']:,}). ")
    mine = [r["trained"]["by_set"]["seen"]["exact"] for r in m["replicates"].values()
            if "seen" in r["trained"]["by_set"]]
    if shapes and "caption" in shapes and mine:
        seen, one = shapes["caption"]["seen"]["caption"]["right"]["median"], statistics.median(mine)
        word = "fewer than" if one < seen else "more than" if one > seen else "as many as"
        theirs = f"{lab.grid_tokens} image tokens" if lab.grid_tokens else "image tokens"
        text += (f"Exact captions of seen pairs: {one:.1f}% from {tokens_label(lab.prefix_tokens)}, {word} the "
                 f"{seen:.1f}% the main study's {theirs} give (medians over replicates).")
    return text.rstrip()


def onetoken_results(metrics: Path) -> list[str]:
    if (found := read_all(metrics / "onetoken", "encode.json", "scores.json")) is None:
        return []
    encode, m = found
    lab, n = labels(m, metrics), len(m["replicates"])
    train = encode["splits"]["train"]
    head = (f"**One-token study** (`metrics/onetoken/`): {train['pictures']:,} training pictures of "
            f"`{encode['folder']}`, each one pooled vector of {encode['width']} numbers from {encode['encoder']}, "
            f"through a {next(iter(m['replicates'].values()))['trainable']:,}-parameter MLP into "
            f"{tokens_label(lab.prefix_tokens)}; {n} replicate{'s' if n != 1 else ''}, {m['pictures']} test pictures.")
    if not m["available"]:
        return [head, "", f"Agreement: {m['why']}", ""]
    shapes = read_json_if_present(metrics / "shapes" / "scores.json")
    return [head + f" Agreement measured by {m['scorer']}:", "", *agreement_table(m), "", *alignment_table(m), "",
            *tokens_table(m, shapes, lab), "", reading(m, shapes, lab, encode["folder"]), "",
            "![alignment of pictures and captions in the scoring space](plots/onetoken/alignment.png)", ""]
