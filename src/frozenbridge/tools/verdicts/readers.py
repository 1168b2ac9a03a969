"""Readers: the metrics a claim reads, turned into its rule's cells and a sentence of our numbers.

A reader looks in metrics/ first, then in the saved results of an on-demand command (results/<name>/metrics/), and
names the file it read; when no file holds what the claim needs, it names the command that measures it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from frozenbridge.core.summary import read_json_if_present
from frozenbridge.shapes.report.analysis_tables import _range
from frozenbridge.tools.verdicts.grounds import ground
from frozenbridge.tools.verdicts.rules import Cell, Evidence, paired_cell

ALL_RECIPES = "dvc exp run -S 'shapes.recipes=[caption,qa,caption_qa,caption_qa_lora,caption_qa_mix]'"
CAPACITY = "dvc unfreeze shapes_capacity && dvc repro shapes_capacity"
QUESTION_TASKS = ("count", "binding", "leftmost")


class Sources:
    """metrics/ first, then each saved result under results/ (with the command that made it)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.places = [(Path(root) / "metrics", "metrics", "")]
        for folder in sorted((Path(root) / "results").glob("*/")):
            meta = read_json_if_present(folder / "experiment.json") or {}
            self.places.append((folder / "metrics", f"results/{folder.name}/metrics", meta.get("command", "")))

    def read(self, rel: str, need: Callable[[dict], bool] = lambda d: True) -> tuple[dict | None, str]:
        """The first `rel` (e.g. shapes/paired.json) that `need` accepts, and where it was found."""
        data, source, _ = self.find(rel, need)
        return data, source

    def find(self, rel: str, need: Callable[[dict], bool] = lambda d: True) -> tuple[dict | None, str, Path | None]:
        """As `read`, with the metrics folder it was found in (None where none holds it)."""
        for folder, label, command in self.places:
            data = read_json_if_present(folder / rel)
            if data is not None and need(data):
                return data, f"{label}/{rel}" + (f", from {command}" if command else ""), folder
        return None, "", None


def pair(s: Sources, pair: str, test: str, tasks: tuple[str, ...], command: str = ALL_RECIPES) -> Evidence:
    """A pair of recipes' paired cells (paired.json), with each side's right scores beside its best control from the
    same folder's replicates.json (grounds.py)."""
    data, source, folder = s.find("shapes/paired.json", lambda d: pair in d)
    if data is None:
        return Evidence(missing=command)
    cells, parts, grounds = [], [], []
    for task in tasks:
        c = data[pair][test][task]
        cells.append(Cell(f"{test} {task}", paired=c, items=c["items"]))
        grounds += [ground(side, recipe, folder / "shapes", recipe, test, task)
                    for side, recipe in zip(("first", "second"), pair.split(" vs "))]
        parts.append(f"{task}: {c['median_difference']:+g} of {c['items']} (ahead {c['ahead']}, behind "
                     f"{c['behind']}, p = {c['sign_test_p']:.3g})")
    n = cells[0].paired["replicates"]
    return Evidence(cells, f"{pair}, first − second, {test} pairs, {n} replicate{'s' if n != 1 else ''}: "
                    + "; ".join(parts), source, grounds=tuple(g for g in grounds if g))


def reads_the_picture(s: Sources) -> Evidence:
    data, source = s.read("shapes/replicates.json")
    if data is None:
        return Evidence(missing="dvc repro shapes_summarize")
    cells = []
    for recipe, tests in data.items():
        for task in ("caption",) if recipe == "caption" else QUESTION_TASKS:
            cells.append(Cell(f"{recipe} {task}", tuple(r["gap"] for r in tests["seen"][task].values())))
    worst = min(cells, key=lambda c: min(c.values))
    return Evidence(cells, f"smallest gap {min(worst.values):g} points ({worst.label}), over {len(cells)} recipe-task "
                    f"cells × {len(worst.values)} replicates, seen pairs", source)


def merge_costs_nothing(against: str) -> Callable[[Sources], Evidence]:
    def read(s: Sources) -> Evidence:
        data, source = s.read("shapes/capacity.json", lambda d: against in d)
        if data is None:
            return Evidence(missing=CAPACITY)
        merged = {r["replicate"]: r["exact"] for r in data["2x2 merged"]["runs"]}
        other = {r["replicate"]: r["exact"] for r in data[against]["runs"]}
        diffs = tuple(round(merged[k] - other[k], 2) for k in sorted(merged) if k in other)
        return Evidence([Cell(f"merged − {against}", diffs)],
                        f"captions exact, seen pairs: merged ({data['2x2 merged']['tokens']} tokens) "
                        f"{data['2x2 merged']['exact']:.4g}, {against} ({data[against]['tokens']} tokens) "
                        f"{data[against]['exact']:.4g}; per replicate merged − {against}: "
                        f"{', '.join(f'{d:+g}' for d in diffs)} points", source)
    return read


def _text(s: Sources, lora: bool) -> tuple[dict | None, str]:
    def need(d: dict) -> bool:
        runs = [r for reps in d["runs"].values() for r in reps.values() if r["lora"] == lora]
        return bool(runs) and (lora or all("weights_unchanged" in r for r in runs))
    return s.read("shapes/text.json", need)


def frozen_text_unchanged(s: Sources) -> Evidence:
    data, source = _text(s, lora=False)
    if data is None:
        return Evidence(missing="dvc repro shapes_text")
    runs = {f"{k} {rep}": r for k, reps in data["runs"].items() for rep, r in reps.items() if not r["lora"]}
    cells = [Cell(name, (r["equals_base"],)) for name, r in runs.items()]
    same = sum(r["equals_base"] for r in runs.values())
    return Evidence(cells, f"{same} of {len(runs)} frozen runs: weights digest unchanged by training and passage "
                    f"perplexity equal before and after ({data['base']:g}, base digest {data['base_digest']})",
                    source)


def lora_text_moves(s: Sources) -> Evidence:
    data, source = _text(s, lora=True)
    if data is None:
        return Evidence(missing=ALL_RECIPES)
    runs = [r for reps in data["runs"].values() for r in reps.values() if r["lora"]]
    cells = [Cell("LoRA runs", tuple(r["perplexity"] != data["base"] for r in runs))]
    moved = ", ".join(f"{r['perplexity']:g}" for r in runs)
    return Evidence(cells, f"LoRA runs' passage perplexity {moved} against the base model's {data['base']:g}", source)


def wrong_colors_in_picture(s: Sources) -> Evidence:
    data, source = s.read("shapes/wrong_answers.json")
    if data is None:
        return Evidence(missing="dvc repro shapes_analyze")
    cells = [Cell(recipe, (100 * t["binding"]["in_picture"] / t["binding"]["wrong"],))
             for recipe, t in data.items() if t["binding"]["wrong"]]
    shares = ", ".join(f"{c.label} {c.values[0]:.3g}% of {data[c.label]['binding']['wrong']}" for c in cells)
    return Evidence(cells, "wrong held-out binding answers whose color is on another shape of the picture, pooled "
                    f"over replicates: {shares}", source)


def captions_cut_colors_not_in_picture(s: Sources) -> Evidence:
    data, source = s.read("shapes/wrong_answers.json", lambda d: {"qa", "caption_qa"} <= set(d)
                          and "by_replicate" in d["qa"]["binding"])
    if data is None:
        return Evidence(missing="dvc repro shapes_analyze")
    qa, cq = data["qa"]["binding"]["by_replicate"], data["caption_qa"]["binding"]["by_replicate"]
    diffs = [a["not_in_picture"] - b["not_in_picture"] for a, b in zip(qa, cq, strict=True)]
    cell = paired_cell("held-out binding", diffs, 1)
    totals = data["qa"]["binding"]["not_in_picture"], data["caption_qa"]["binding"]["not_in_picture"]
    return Evidence([cell], f"wrong held-out binding colors in no shape of the picture, qa − caption_qa per "
                    f"replicate: {', '.join(f'{d:+d}' for d in diffs)} (totals {totals[0]} and {totals[1]})", source)


def follows_the_shown_picture(s: Sources) -> Evidence:
    data, source = s.read("shapes/controls.json")
    if data is None:
        return Evidence(missing="dvc repro shapes_summarize")
    cells = []
    for recipe, tests in data.items():
        if recipe == "caption":
            continue
        for task in QUESTION_TASKS:
            c = tests["seen"][task]
            cells.append(Cell(f"{recipe} {task}", (c["wrong_vs_shown"]["min"] - c["wrong"]["max"],)))
    return Evidence(cells, "seen pairs, another scene's picture shown: lowest replicate's answers right for the "
                    "shown picture minus highest replicate's right for the original, points: "
                    + ", ".join(f"{c.label} {c.values[0]:+.4g}" for c in cells), source)


def color_easier_after_connector(s: Sources) -> Evidence:
    data, source = s.read("shapes/probes.json")
    if data is None:
        return Evidence(missing="dvc repro shapes_probe")
    after, before = data["places"]["stage1"]["color"]["heldout"], data["places"]["encoder"]["color"]["heldout"]
    return Evidence([Cell("held-out color", ranges=((after["min"], after["max"]), (before["min"], before["max"])))],
                    f"linear probe, a held-out shape's color: after the stage-1 connector {_range(after)}% "
                    f"({data['places']['stage1']['runs']} runs), at the encoder {_range(before)}%", source)


def two_pictures_fail(s: Sources) -> Evidence:
    data, source = s.read("shapes/text.json", lambda d: all("two_pictures" in r for reps in d["runs"].values()
                                                            for r in reps.values()))
    if data is None:
        return Evidence(missing="dvc repro shapes_text")
    cells = [Cell(recipe, tuple(r["two_pictures"]["both"] for r in reps.values()))
             for recipe, reps in data["runs"].items()]
    pairs = next(iter(next(iter(data["runs"].values())).values()))["two_pictures"]["pairs"]
    return Evidence(cells, f"pairs answered right in both orders, of {pairs}, per replicate: "
                    + ", ".join(f"{c.label} {'/'.join(f'{v:g}' for v in c.values)}%" for c in cells), source)


def _digits(s: Sources) -> tuple[dict | None, str]:
    return s.read("digits/adapter.json")


def adapter_reaches_ceiling(s: Sources) -> Evidence:
    data, source = _digits(s)
    if data is None:
        return Evidence(missing="dvc repro digits_train")
    most = max(data["by_tokens"], key=int)
    t = data["by_tokens"][most]
    return Evidence([Cell(f"{most} tokens", tuple(v / data["ceiling"] for v in t["replicates"].values()))],
                    f"adapter of {most} prefix tokens {_range(t['accuracy'])} against the classifier's "
                    f"{data['ceiling']:g}: {t['share_of_ceiling']:.1%} of it", source)


def one_token_near_chance(s: Sources) -> Evidence:
    data, source = _digits(s)
    classifier, _ = s.read("digits/classifier.json")
    if data is None or "1" not in data["by_tokens"] or classifier is None:
        return Evidence(missing="dvc repro digits_train")
    chance = classifier["most_common_test_digit_share"]
    t = data["by_tokens"]["1"]
    return Evidence([Cell("1 token", tuple(v - chance for v in t["replicates"].values()))],
                    f"adapter of 1 prefix token {_range(t['accuracy'])} against chance {chance:g} (the test set's "
                    "most common digit)", source)


def fluent_before_training(s: Sources) -> Evidence:
    data, source = _digits(s)
    if data is None:
        return Evidence(missing="dvc repro digits_train")
    cells = [Cell(f"{k} tokens", (t["before"]["well_formed"]["min"],)) for k, t in data["by_tokens"].items()]
    first = next(iter(data["by_tokens"].values()))["before"]["example"]
    return Evidence(cells, "untrained adapters' captions well formed, lowest replicate: "
                    + ", ".join(f"{c.label} {c.values[0]:.3g}" for c in cells) + f" (e.g. {first!r})", source)


def _recall(s: Sources):
    return s.read("retrieval/recall.json", lambda d: {"adaptor", "scratch"} <= set(d["towers"]))


def adaptor_beats_scratch(s: Sources) -> Evidence:
    data, source = _recall(s)
    if data is None:
        return Evidence(missing="dvc repro retrieval_summarize")
    cells, parts = [], []
    for test in ("seen", "heldout"):
        for length in ("short", "long"):
            a = data["towers"]["adaptor"]["recall"][test][length]["image_to_text"]["R@1"]
            b = data["towers"]["scratch"]["recall"][test][length]["image_to_text"]["R@1"]
            cells.append(Cell(f"{test} {length}", ranges=((a["min"], a["max"]), (b["min"], b["max"]))))
            parts.append(f"{test} {length} {a['median']:.3g} vs {b['median']:.3g}")
    return Evidence(cells, "image→text R@1, adaptor vs scratch (medians): " + ", ".join(parts), source)


def more_on_long_captions(s: Sources) -> Evidence:
    data, source = _recall(s)
    if data is None:
        return Evidence(missing="dvc repro retrieval_summarize")
    cells, parts = [], []
    for test in ("seen", "heldout"):
        gain = {length: data["towers"]["adaptor"]["recall"][test][length]["image_to_text"]["R@1"]["median"]
                - data["towers"]["scratch"]["recall"][test][length]["image_to_text"]["R@1"]["median"]
                for length in ("short", "long")}
        cells.append(Cell(test, (gain["long"] - gain["short"],)))
        parts.append(f"{test}: {gain['long']:+.3g} on long, {gain['short']:+.3g} on short")
    return Evidence(cells, "adaptor − scratch, image→text R@1 medians: " + "; ".join(parts), source)


def share_of_gap(s: Sources) -> Evidence:
    data, source = s.read("onetoken/scores.json", lambda d: d.get("available") and "replicates" in d)
    if data is None:
        return Evidence(missing="dvc repro onetoken_score")
    shares = tuple(r["share_of_gap"] for r in data["replicates"].values())
    return Evidence([Cell("share of gap", shares)], f"{_range(data['median']['share_of_gap'])} of the gap "
                    f"closed, {len(shares)} replicates", source)


def _alignment(s: Sources) -> tuple[dict | None, str]:
    return s.read("onetoken/scores.json", lambda d: "alignment" in d)


def own_caption_nearest(s: Sources) -> Evidence:
    data, source = _alignment(s)
    if data is None:
        return Evidence(missing="dvc repro onetoken_score")
    a = data["alignment"]
    return Evidence([Cell("own caption nearest, times chance", (a["own_nearest"] / a["chance"],))],
                    f"own caption nearest for {a['own_nearest']:g}% of {a['pictures']} pictures, chance "
                    f"{a['chance']:g}%", source)


def matched_above_mismatched(s: Sources) -> Evidence:
    data, source = _alignment(s)
    if data is None:
        return Evidence(missing="dvc repro onetoken_score")
    a = data["alignment"]
    return Evidence([Cell("matched − mismatched", (a["matched"] - a["mismatched"],))],
                    f"mean similarity matched {a['matched']:g}, mismatched {a['mismatched']:g}", source)


