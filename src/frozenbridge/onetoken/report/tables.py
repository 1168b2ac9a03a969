"""The one-token study's report tables, from metrics/onetoken/ (and the main study's caption scores beside them),
next to the reference's numbers."""

from __future__ import annotations

import statistics
from pathlib import Path

from frozenbridge.core.summary import read_all, read_json_if_present

# clip-qwen-photo-captioning (the reference): CLIP ViT-B/32 -> one token -> Qwen3-0.6B, 2,000 Flickr30k pairs, 3 seeds
REFERENCE = {"floor": 0.1897, "trained": 0.2125, "ceiling": 0.3280, "share": (0.282, 0.126, 0.086),
             "own_nearest": 60.9, "pictures": 2000, "chance": 0.05, "matched": 0.3268, "mismatched": 0.1668}
KIND_LABELS = {"floor": "untrained connector (floor)", "trained": "trained connector"}
REFERENCE_SHARE = (REFERENCE["trained"] - REFERENCE["floor"]) / (REFERENCE["ceiling"] - REFERENCE["floor"])
HEADLINE_REFERENCE = {"share_of_gap": f"{REFERENCE_SHARE:.1%} (CLIP + Qwen3-0.6B, Flickr30k)"}


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


def tokens_table(m: dict, shapes: dict | None) -> list[str]:
    """One pooled vector -> 1 token against the main study's 49 tokens (caption recipe), on the same captions."""
    med = m["median"]["trained"]
    reps = list(m["replicates"].values())
    rows = ["| arrangement | exact captions, seen pairs | held-out pairs | distinct captions |", "|---|---:|---:|---:|"]

    def by_set(name: str) -> str:
        values = [r["trained"]["by_set"][name]["exact"] for r in reps if name in r["trained"]["by_set"]]
        return f"{statistics.median(values):.1f}%" if values else "—"

    rows.append(f"| one token from the pooled vector (this study, {m['pictures']} test pictures) | {by_set('seen')} | "
                f"{by_set('heldout')} | {med['distinct']['median']:g} of {m['pictures']} |")
    floor = m["median"]["floor"]["distinct"]["median"]
    rows.append(f"| the same, untrained | — | — | {floor:g} of {m['pictures']} |")
    if shapes and "caption" in shapes:
        c = shapes["caption"]
        exact = [c[test]["caption"]["right"]["median"] for test in ("seen", "heldout")]
        distinct = [c[test]["distinct_captions"]["median"] for test in ("seen", "heldout")]
        rows.append(f"| 49 tokens from the 14×14 grid (main study, `caption` recipe, 60 pictures a test set) | "
                    f"{exact[0]:.1f}% | {exact[1]:.1f}% | {distinct[0]:g} + {distinct[1]:g} of 120 |")
    return rows


def reading(m: dict, shapes: dict | None) -> str:
    med, ref = m["median"], REFERENCE
    floor, trained, share = med["floor"]["agreement"]["median"], med["trained"]["agreement"]["median"], \
        med["share_of_gap"]
    ref_share = (ref["trained"] - ref["floor"]) / (ref["ceiling"] - ref["floor"])
    text = (f"Reading: training moves agreement from {floor:.4f} to {trained:.4f} against {m['ceiling']:.4f} for the "
            f"true captions, {share['median']:.0%} of the gap (replicates {share['min']:.0%} to {share['max']:.0%}); "
            f"the reference closed {ref_share:.0%} in CLIP's space on photographs. The two shares are not one "
            "measurement: this space was trained on the shapes study's training captions, and a picture's own "
            "caption is its nearest "
            f"in it {m['alignment']['own_nearest']:.0f}% of the time (the reference's CLIP: {ref['own_nearest']}%). ")
    mine = [r["trained"]["by_set"]["seen"]["exact"] for r in m["replicates"].values()
            if "seen" in r["trained"]["by_set"]]
    if shapes and "caption" in shapes and mine:
        seen, one = shapes["caption"]["seen"]["caption"]["right"]["median"], statistics.median(mine)
        text += (f"Exact captions of seen pairs: {one:.1f}% from one token against {seen:.1f}% from the main "
                 "study's 49; " + ("one averaged vector keeps no positions, and a caption lists the shapes left to "
                                   "right." if one < seen else "one vector is enough here."))
    return text


def onetoken_results(metrics: Path) -> list[str]:
    if (found := read_all(metrics / "onetoken", "encode.json", "scores.json")) is None:
        return []
    encode, m = found
    train = encode["splits"]["train"]
    head = (f"**One-token study** (`metrics/onetoken/`): {train['pictures']:,} training pictures of "
            f"`{encode['folder']}`, each one pooled vector of {encode['width']} numbers from {encode['encoder']}, "
            f"through a {next(iter(m['replicates'].values()))['trainable']:,}-parameter MLP into one token; "
            f"{len(m['replicates'])} replicates, {m['pictures']} test pictures.")
    if not m["available"]:
        return [head, "", f"Agreement: {m['why']}", ""]
    shapes = read_json_if_present(metrics / "shapes" / "scores.json")
    return [head + f" Agreement measured by {m['scorer']}:", "", *agreement_table(m), "", *alignment_table(m), "",
            *tokens_table(m, shapes), "", reading(m, shapes), "",
            "![alignment of pictures and captions in the scoring space](plots/onetoken/alignment.png)", ""]
