"""Report tables of the shapes study's analyses: paired replicates, wrong answers, probes, the language model's text,
pictures in the sequence and what they cost, the capacity check and the receipts; every number from metrics/shapes/."""

from __future__ import annotations

from frozenbridge.core.summary import markdown_table
from frozenbridge.shapes.data.vocab import RECIPE_NAMES
from frozenbridge.shapes.summary.paired import CLAIM

ROUNDING = 1e-3  # the most a convolution and its matmul may differ by and still be called equal (float rounding)
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _range(s: dict) -> str:
    """median [min–max] of a summary (frozenbridge.shapes.aggregate.summary)."""
    return f"{s['median']:g} [{s['min']:g}–{s['max']:g}]"


def _signed(v: float) -> str:
    """+5, -1.5, and 0 unsigned."""
    return f"{v:+g}" if v else "0"


def _coverage(interval: dict) -> str:
    return f"{round(100 * interval['coverage'], 1):g}%"


def _percent(fraction) -> str:
    return f"{round(100 * float(fraction), 2):g}%"


def best_coverage(replicates: int) -> float:
    """What [min, max] of n paired differences covers, the most any order-statistic interval of n can."""
    return 1 - 2 / 2 ** replicates


def paired_evidence(cell: dict, flip: bool = False) -> str:
    """One paired.json cell as a phrase: the median difference, its interval with the coverage, the sign test; with
    `flip`, second minus first."""
    sign, iv = (-1 if flip else 1), cell["interval"]
    low, high = sorted((sign * iv["low"], sign * iv["high"]))
    return (f"median {_signed(sign * cell['median_difference'])} of {cell['items']} questions, {_coverage(iv)} "
            f"interval [{_signed(low)}, {_signed(high)}], sign test p = {cell['sign_test_p']:g}")


def paired_verdict(cell: dict, first: str, second: str) -> str:
    """What a paired.json cell lets the report say: a recipe is ahead only where `supported` names it."""
    iv = cell["interval"]
    if cell["supported"] is not None:
        winner = first if cell["supported"] == "first" else second
        return f"{winner} ahead: the {_coverage(iv)} interval excludes zero"
    if iv["low"] <= 0 <= iv["high"]:
        return "the interval includes zero: no difference supported"
    n = cell["replicates"]
    if best_coverage(n) < CLAIM:
        return (f"no difference supported ({n} replicates cannot give an interval of {_percent(CLAIM)} or more, and "
                f"the sign test cannot go below p = {2 / 2 ** n:g} with them)")
    return (f"no difference supported: the interval excludes zero but covers {_coverage(iv)}, less than the "
            f"{_percent(CLAIM)} a difference needs")


def _reach(counts: set[int]) -> str:
    """What the table's replicate counts can cover at best, e.g. "2 replicates reach 50% at best"."""
    return "; ".join(f"{n} replicates reach {_percent(best_coverage(n))} at best" if best_coverage(n) < 0.95
                     else f"{n} replicates reach 95%" for n in sorted(counts))


def paired_analysis_table(pairs: dict) -> list[str]:
    """metrics/shapes/paired.json: per pair, test set and task, replicates ahead / tied / behind, the median
    difference, its exact interval, the sign test, and which recipe (if any) the interval supports."""
    cells, counts = [], set()
    for name, tests in pairs.items():
        first, second = name.split(" vs ")
        for test in ("heldout", "seen"):
            for task, c in tests.get(test, {}).items():
                iv = c["interval"]
                counts.add(c["replicates"])
                winner = {"first": first, "second": second}.get(c["supported"], "none")
                cells.append((name, test, task, c["ahead"], c["tied"], c["behind"],
                              f"{c['median_difference']:+g} of {c['items']}",
                              f"[{_signed(iv['low'])}, {_signed(iv['high'])}] ({_coverage(iv)})",
                              f"{c['sign_test_p']:g}", winner))
    return markdown_table("Paired replicates (`metrics/shapes/paired.json`): in how many replicates the first "
                          "recipe of the pair had more questions right, as many, or fewer. Then the median of the "
                          "per-replicate differences (first − second, in questions of the number given). Beside it, "
                          "an exact interval for that median from the sorted differences (order statistics, "
                          "binomial, distribution-free): at least 95% where the replicates allow, else [min, max] at "
                          "the coverage given. Then the exact two-sided sign test over replicates (ties dropped). "
                          f"Last, the recipe an interval of at least {_percent(CLAIM)} places ahead (none where it "
                          f"includes zero or covers less; {_reach(counts)}):",
                          ["pair", "test pairs", "task", "ahead", "tied", "behind", "median difference",
                           "interval (coverage)", "sign test p", "supported"], cells,
                          align="|---|---|---|---:|---:|---:|---:|---:|---:|---|")


def wrong_answers_table(wrong: dict) -> list[str]:
    """metrics/shapes/wrong_answers.json: where held-out wrong colors come from, beside chance."""
    cells = [(recipe, task, c["wrong"], c["in_picture"], c["not_in_picture"], c["not_a_color"],
              f"{c['nearest']} ({c['nearest_chance']:g})", f"{c['common']} ({c['common_chance']:g})")
             for recipe, tasks in wrong.items() for task, c in tasks.items()]
    return markdown_table("Wrong answers on held-out pairs, all replicates (`metrics/shapes/wrong_answers.json`). "
                          "Each wrong color is a color of another shape in the picture or not. Of those in the "
                          "picture: the nearest shape's color, and one of the asked kind's two most common training "
                          "colors, each beside what picking one of the picture's other shapes at random gives:",
                          ["recipe", "task", "wrong", "in picture", "not in it", "not a color", "nearest (chance)",
                           "common (chance)"], cells, left=2)


def perplexity_table(text: dict) -> list[str]:
    """metrics/shapes/text.json: each run's language model as it trained (its weights digest and passage perplexity,
    before and after training, recorded by the run) beside the base model's; older files recorded only the rebuilt
    run's perplexity, and the table says so."""
    recorded = all("weights_unchanged" in r for reps in text["runs"].values() for r in reps.values())
    head = (f"The language model's text (`metrics/shapes/text.json`): perplexity on the package's passage of plain "
            f"prose ({text['passage_tokens']} tokens, no picture), base model {text['base']:g}")
    if not recorded:
        rows = [head + ", from each run rebuilt from its saved folder (this file predates the training runs' own "
                "record of their language model, so it cannot show that training left it unchanged):", "",
                "| recipe | replicate | perplexity | LoRA |", "|---|---:|---:|---|"]
        for recipe, reps in text["runs"].items():
            rows += [f"| {recipe} | {rep} | {r['perplexity']:g} | {'yes' if r['lora'] else 'no'} |"
                     for rep, r in reps.items()]
        return rows
    rows = [head + f" (weights digest {text['base_digest']}). Each run recorded its own language model's digest and "
            "perplexity before and after it trained:", "",
            "| recipe | replicate | perplexity after training | weights unchanged by training | the base model's text "
            "| rebuilt from the saved run | LoRA |", "|---|---:|---:|---|---|---:|---|"]
    for recipe, reps in text["runs"].items():
        for rep, r in reps.items():
            rows.append(f"| {recipe} | {rep} | {r['perplexity']:g} | {'yes' if r['weights_unchanged'] else 'no'} | "
                        f"{'yes' if r['equals_base'] else 'no'} | {r['rebuilt_perplexity']:g} | "
                        f"{'yes' if r['lora'] else 'no'} |")
    return rows


def text_table(text: dict) -> list[str]:
    """metrics/shapes/text.json: perplexity on the passage per run beside the base model, and the no-picture replies."""
    if not text:
        return []
    rows = perplexity_table(text)
    if text.get("positions"):
        rows += ["", "Positions in the sequence (the count question; `metrics/shapes/text.json`):", "",
                 "| input | positions | from pictures |", "|---|---:|---:|"]
        rows += [f"| {name} | {p['positions']} | {p['from_pictures']} |" for name, p in text["positions"].items()]
    two = [(recipe, rep, r["two_pictures"]) for recipe, reps in text["runs"].items() for rep, r in reps.items()
           if "two_pictures" in r]
    if two:
        rows += ["", f"A two-picture question no run trained on, \"Which picture has a triangle, the first or the "
                 f"second?\" (exactly one has; {two[0][2]['pairs']} pairs of seen-pair test pictures), asked in the "
                 "given order and swapped; exact match, %:", "",
                 "| recipe | replicate | given order | swapped | right in both | most common replies |",
                 "|---|---:|---:|---:|---:|---|"]
        for recipe, rep, t in two:
            said = ", ".join(f"{k!r} x{v}" for k, v in t["replies"].items())
            rows.append(f"| {recipe} | {rep} | {t['given']:g} | {t['swapped']:g} | {t['both']:g} | {said} |")
    replies = text.get("no_picture", {})
    if replies:
        rows += ["", "What each run (first replicate) wrote to the first question of each kind with no picture:", "",
                 "| recipe | question | right answer | reply with no picture |", "|---|---|---|---|"]
        for recipe, tasks in replies.items():
            for r in tasks.values():
                rows.append(f"| {recipe} | {r['prompt']} | {r['target']} | {r['reply'] or '(nothing)'} |")
    return rows + [""]


def _classes(chance: dict, test: str) -> str:
    return " and ".join(f"{chance[t][test]['classes']} {t}{'s' if chance[t][test]['classes'] != 1 else ''}"
                        for t in ("color", "kind") if t in chance)


# the places `python -m frozenbridge.shapes.sweeps.probe_places` probes, in the order a picture passes them
PROBE_PLACES = ("encoder cells", "connector input", "untrained connector", "stage-1 hidden layer", "stage-1 output",
                "stage-1 output, no positions")


def probes_table(probes: dict, source: str = "metrics/shapes/probes.json", order: tuple[str, ...] = ()) -> list[str]:
    """metrics/shapes/probes.json: linear-probe accuracy for color and kind per place, seen vs held-out pairs, and
    each test set's chance as the probe stage computed it from the set (a probes.json without it gets none)."""
    if not probes:
        return []
    n, chance = probes["shapes"], probes.get("chance")
    if chance:
        note = (f"Chance is the share of the set's most common color or kind, what always naming it scores (the "
                f"seen-pair set holds {_classes(chance, 'seen')}, the held-out-pair set {_classes(chance, 'heldout')})")
    else:
        note = ("There is no chance level: this probes.json does not record what its test sets hold (`dvc repro "
                "shapes_probe` writes it)")
    rows = [f"Linear probes (`{source}`): a shape's color and kind read from the mean vector "
            f"under it. Trained on {n['train']} shapes of training pictures, tested on {n['seen']} seen-pair shapes "
            f"and {n['heldout']} held-out-pair shapes; accuracy %, median [min–max] over replicates. {note}:", "",
            "| read from | replicates | color: seen | color: held-out | kind: seen | kind: held-out |",
            "|---|---:|---:|---:|---:|---:|"]
    order = list(order) or ["encoder", "stage1", *[p for p in probes["places"] if p not in ("encoder", "stage1")]]
    for place in (p for p in order if p in probes["places"]):
        p = probes["places"][place]
        label = {"encoder": "encoder output", "stage1": "stage-1 connector"}.get(
            place, f"{place} connector" if place in RECIPE_NAMES else place)
        rows.append(f"| {label} | {p['runs']} | {_range(p['color']['seen'])} | {_range(p['color']['heldout'])} | "
                    f"{_range(p['kind']['seen'])} | {_range(p['kind']['heldout'])} |")
    if chance:
        cells = [f"{chance[t][test]['majority']:g}" if t in chance else "—"
                 for t in ("color", "kind") for test in ("seen", "heldout")]
        rows.append("| *chance (the set's most common class)* | — | " + " | ".join(cells) + " |")
    if len(order) > 2:  # a chain of places: say where held-out color drops most
        chain = [p for p in order if p in probes["places"]]
        steps = [(probes["places"][b]["color"]["heldout"]["median"] - probes["places"][a]["color"]["heldout"]["median"],
                  a, b) for a, b in zip(chain, chain[1:])]
        drop, a, b = min(steps)
        rows += ["", f"Along this chain the largest change in a held-out shape's color is from {a} to {b}: {drop:+g} "
                 "points (medians)." if drop < 0 else "Along this chain a held-out shape's color never gets harder "
                 "to read."]
    return rows + [""]


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def image_cost_table(cost: dict, bench: dict | None) -> list[str]:
    """metrics/shapes/text.json image_cost: one picture's KV cache merged and unmerged, beside the benchmark's step
    time and memory per image-token count (bench/*.json)."""
    if not cost:
        return []
    per = cost["kv_bytes_per_position"]
    rows = [f"What a picture costs (`metrics/shapes/text.json`): every position keeps {per:,} bytes of KV cache in "
            f"bf16 (2 × {cost['layers']} layers × key/value heads × head width × 2 bytes). The first test picture's "
            f"caption (\"{cost['caption']}\") is {cost['caption_tokens']} tokens, "
            f"{_mib(cost['caption_tokens'] * per)}:", "",
            "| picture | patches | KV cache | merged | KV cache |", "|---|---:|---:|---:|---:|"]
    for r in cost["pictures"]:
        rows.append(f"| {r['side_px']} × {r['side_px']} px | {r['patches']} | {_mib(r['patches_kv_bytes'])} | "
                    f"{r['merged']} | {_mib(r['merged_kv_bytes'])} |")
    tokens = [r for r in (bench or {}).get("rows", []) if r["measure"].endswith("image tokens, batch 16")]
    if tokens:
        rows += ["", f"Training step by image tokens (`python -m frozenbridge.bench steps`, "
                     f"{bench['machine']['device']}):",
                 "", "| image tokens | step, s | saved for backward, MB |", "|---:|---:|---:|"]
        rows += [f"| {r['measure'].split()[0]} | {r['a_value']:.2f} | {r['b_value']:.0f} |" for r in tokens]
    return rows + [""]


def capacity_table(cap: dict) -> list[str]:
    """metrics/shapes/capacity.json (on demand): stage 1 merged vs unmerged vs unmerged size-matched."""
    def exact(c: dict) -> str:
        each = ", ".join(f"{r['exact']:g}" for r in c["runs"])
        return f"{c['exact']:.2f} ({each})"
    cells = [(name, c["tokens"], f"{c['connector_params']:,}", exact(c), f"{c['final_loss']:.4f}",
              f"{c['step_seconds']:.2f}") for name, c in cap.items()]
    ways = NUMBER_WORDS.get(len(cap), str(len(cap)))
    return markdown_table("The capacity check (on demand: `dvc unfreeze shapes_capacity && dvc repro shapes_capacity`; "
                          f"`metrics/shapes/capacity.json`): stage 1 from scratch {ways} ways; exact seen-pair "
                          "captions, final loss and seconds a step, median over replicates (each replicate's exact "
                          "captions in brackets):",
                          ["connector", "image tokens", "parameters", "exact captions, %", "final loss", "s a step"],
                          cells)


def receipts_table(rec: dict) -> list[str]:
    """metrics/shapes/receipts.json: patch embedding = matmul, and who sees the last position."""
    if not rec:
        return []
    patch = rec.get("patch_embedding")
    if patch:
        diff = patch["max_difference"]
        same = ("equals flattened patches times one matrix up to rounding" if diff <= ROUNDING
                else "differs from flattened patches times one matrix")
        line = (f"{rec['encoder']}'s patch embedding (a {patch['kernel'][0]}×{patch['kernel'][1]} convolution, "
                f"stride the same) {same}: largest difference {diff:.3g}.")
    else:
        line = (f"{rec['patch_embedding_note']}, so the patch-embedding receipt needs a ViT-family encoder "
                "(`vision.name`).")
    moved, lm_moved = rec["encoder_first_moves"], rec["language_first_moves"]
    if moved:
        encoder = f"moves the first position's output by up to {moved:.3g} in the encoder ({rec['encoder']})"
    else:
        why = (": a convolution's reach from the top-left cell stops short of the bottom-right patch" if not patch
               else "")
        encoder = f"leaves the first position's output unchanged in the encoder ({rec['encoder']}{why})"
    language = (f"moves the first position by up to {lm_moved:.3g} in the language model ({rec['language']})"
                if lm_moved else f"leaves the first position exactly unchanged in the language model "
                                 f"({rec['language']})")
    return [f"Receipts (`metrics/shapes/receipts.json`): {line} Changing only the last input position "
            f"(the bottom-right patch) {encoder}. Changing only the last token {language}.", ""]
