"""The shapes study's README tables, made from metrics/ and bench/ (the convergence sweep): every number computed.

`python -m frozenbridge.report` puts them into the README beside the benchmark tables.
"""

from __future__ import annotations

import json
from pathlib import Path

from frozenbridge.shapes.reading import reading
from frozenbridge.shapes.vocab import SPLITS, TASKS, TESTS


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def data_table(data: dict) -> list[str]:
    rows = ["| split | pictures | count questions | binding questions | leftmost questions |", "|---|---:|---:|---:|---:|"]
    for split in SPLITS:
        d = data[split]
        rows.append(f"| {split} | {d['pictures']} | {d['questions_count']} | {d['questions_binding']} "
                    f"| {d['questions_leftmost']} |")
    return rows


def color_kind_table(counts: dict) -> list[str]:
    kinds = list(next(iter(counts.values())))
    rows = ["| training shapes | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    rows += [f"| {color} | " + " | ".join(str(counts[color][k]) for k in kinds) + " |" for color in counts]
    return rows


def encode_table(enc: dict) -> list[str]:
    size = sum(enc["bytes"].values())
    return ["| encoder | output shape | stored as | pictures | feature files | per picture |", "|---|---|---|---:|---:|---:|",
            f"| {enc['encoder']} | {' x '.join(map(str, enc['output_shape']))} | {enc['dtype']} | {enc['pictures']} "
            f"| {size / 1e6:.1f} MB | {enc['bytes_per_picture'] / 1e3:.1f} kB |"]


def _range(s: dict) -> str:
    return f"{s['median']:g} [{s['min']:g}–{s['max']:g}]"


def stage1_table(main: dict, controls: dict) -> list[str]:
    rows = ["| caption recipe (stage 1), captions | right | blank | wrong | none | gap | distinct captions |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for test in TESTS:
        m, c = main["caption"][test], controls["caption"][test]["caption"]
        rows.append(f"| {test} pairs | {_range(m['caption']['right'])} | {c['blank']['median']:g} | "
                    f"{c['wrong']['median']:g} | {c['none']['median']:g} | {_range(m['caption']['gap'])} | "
                    f"{_range(m['distinct_captions'])} |")
    return rows


def recipe_table(main: dict) -> list[str]:
    rows = ["| recipe | task | seen: right | seen: gap | held-out: right | held-out: gap |", "|---|---|---:|---:|---:|---:|"]
    for recipe, tests in main.items():
        for task in TASKS:
            if task in tests["seen"]:
                rows.append(f"| {recipe} | {task} | {_range(tests['seen'][task]['right'])} | "
                            f"{_range(tests['seen'][task]['gap'])} | {_range(tests['heldout'][task]['right'])} | "
                            f"{_range(tests['heldout'][task]['gap'])} |")
    return rows


def paired_table(reps: dict, a: str = "qa", b: str = "caption_qa") -> list[str]:
    """Two recipes replicate by replicate (paired: same initial connector, same questions), every task and test."""
    if a not in reps or b not in reps:
        return []
    rows = [f"{a} vs {b}, replicate by replicate (right-picture exact match, %, from `metrics/replicates.json`):", "",
            f"| test pairs | task | replicate | {a} | {b} | {b} − {a} |", "|---|---|---:|---:|---:|---:|"]
    for test in ("heldout", "seen"):
        for task in ("binding", "leftmost", "count"):
            ra, rb = reps[a].get(test, {}).get(task, {}), reps[b].get(test, {}).get(task, {})
            for r in sorted(set(ra) & set(rb), key=int):
                rows.append(f"| {test} | {task} | {r} | {ra[r]['right']:g} | {rb[r]['right']:g} | "
                            f"{rb[r]['right'] - ra[r]['right']:+.4g} |")
    return rows + [""]


def _steps(v) -> str:
    return "never" if v is None else f"{v:g}"


def converge_table(saved: dict, params: dict | None) -> list[str]:
    """`python -m frozenbridge.shapes.converge`: steps (and seconds) to 50% and 70% exact captions, median and worst seed."""
    rows = [f"Stage-1 convergence (`python -m frozenbridge.shapes.converge`): exact captions of {saved['items']} seen-pair "
            f"test pictures every {saved['every']} steps; median and worst over the seeds (a seed is a replicate's "
            "initial connector and caption order); \"never\" = not within the steps given. The setting "
            "params.yaml holds is marked ◀.", "",
            "| setting | seeds | s a step | to 50%: median / worst, steps (s) | to 70%: median / worst, steps (s) | "
            "best exact per seed, % |", "|---|---:|---:|---:|---:|---:|"]
    for name, entry in saved["results"].items():
        s = entry["summary"]
        if "step_seconds" not in entry:
            continue  # not timed alone yet (python -m frozenbridge.shapes.converge --time-steps N)
        sec = lambda v: "—" if v is None else f"{v * entry['step_seconds']:.0f}"  # noqa: E731
        cells = [f"{_steps(s[f'median_{t}'])} / {_steps(s[f'worst_{t}'])} ({sec(s[f'median_{t}'])} / "
                 f"{sec(s[f'worst_{t}'])})" for t in (50, 70)]
        mark = " ◀" if params is not None and _matches(entry["overrides"], params) else ""
        rows.append(f"| {name}{mark} | {s['seeds']} | {entry['step_seconds']:.2f} | {cells[0]} | {cells[1]} | "
                    f"{', '.join(f'{e:g}' for e in s['best_exact'])} (of {entry['steps']} steps) |")
    return rows + ([] if params is None else _against_default(saved["results"], params))


def _worst_seconds(entry: dict) -> float:
    worst = entry["summary"]["worst_70"]
    return float("inf") if worst is None else worst * entry["step_seconds"]


NOISE = 0.05  # step times measured a few minutes apart differ by about this much on a shared machine


def _against_default(results: dict, params: dict) -> list[str]:
    """One generated line: which settings beat the marked one on the worst seed's seconds to 70% by more than the
    timing noise, which were level with it, and which were slower."""
    timed = {k: e for k, e in results.items() if "step_seconds" in e}
    default = next((k for k, e in timed.items() if _matches(e["overrides"], params)), None)
    if default is None:
        return []
    mine = _worst_seconds(timed[default])
    others = {k: _worst_seconds(e) for k, e in timed.items() if k != default}
    faster = [f"{k} ({s:.0f} s)" for k, s in others.items() if s < mine * (1 - NOISE)]
    level = [f"{k} ({s:.0f} s)" for k, s in others.items() if mine * (1 - NOISE) <= s <= mine * (1 + NOISE)]
    slower = [k for k, s in others.items() if s > mine * (1 + NOISE)]
    return ["", f"On the worst seed's seconds to 70%, against the marked setting ({mine:.0f} s): faster by more "
            f"than {NOISE:.0%}: {', '.join(faster) or 'none'}; within {NOISE:.0%}: {', '.join(level) or 'none'}; "
            f"slower or never there: {', '.join(slower) or 'none'}."]


def heldout_curve_table(saved: dict) -> list[str]:
    """`converge --heldout --no-stop`: seen- and held-out-pair exact captions against stage-1 steps, per seed."""
    rows: list[str] = []
    for name, entry in saved["results"].items():
        runs = [r for r in entry["runs"] if "heldout_curve" in r]
        if not runs:
            continue
        seeds = ", ".join(str(r["seed"]) for r in runs)
        rows += [f"Exact captions against stage-1 steps, setting \"{name}\", seeds {seeds} "
                 f"(`python -m frozenbridge.shapes.converge --heldout --no-stop`; {saved['items']} pictures of each test set):",
                 "", "| stage-1 steps | seen pairs, % (per seed) | held-out pairs, % (per seed) |", "|---:|---:|---:|"]
        steps = sorted({s for r in runs for s, _ in r["curve"]})
        for step in steps:
            seen = [dict(r["curve"]).get(step) for r in runs]
            held = [dict(r["heldout_curve"]).get(step) for r in runs]
            fmt = lambda vals: ", ".join("—" if v is None else f"{v:g}" for v in vals)  # noqa: E731
            rows.append(f"| {step} | {fmt(seen)} | {fmt(held)} |")
        rows.append("")
    return rows


def _matches(overrides: dict, params: dict) -> bool:
    def get(key: str):
        node = params
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return all(get(k) == v for k, v in overrides.items())


def paired_analysis_table(pairs: dict) -> list[str]:
    """metrics/paired.json: per pair, test set and task, replicates ahead / tied / behind and the median difference."""
    if not pairs:
        return []
    rows = ["Paired replicates (`metrics/paired.json`): in how many replicates the first recipe of the pair had more "
            "questions right, as many, or fewer, and the median of the per-replicate differences (first − second, in "
            "questions of the number given):", "",
            "| pair | test pairs | task | ahead | tied | behind | median difference |", "|---|---|---|---:|---:|---:|---:|"]
    for name, tests in pairs.items():
        for test in ("heldout", "seen"):
            for task, c in tests.get(test, {}).items():
                rows.append(f"| {name} | {test} | {task} | {c['ahead']} | {c['tied']} | {c['behind']} | "
                            f"{c['median_difference']:+g} of {c['items']} |")
    return rows + [""]


def wrong_answers_table(wrong: dict) -> list[str]:
    """metrics/wrong_answers.json: where held-out wrong colors come from, beside chance."""
    if not wrong:
        return []
    rows = ["Wrong answers on held-out pairs, all replicates (`metrics/wrong_answers.json`): a color of another shape "
            "in the picture or not; of those in the picture, the nearest shape's color and one of the asked kind's two "
            "most common training colors, each beside what picking one of the picture's other shapes at random gives:",
            "", "| recipe | task | wrong | in picture | not in it | not a color | nearest (chance) | common (chance) |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for recipe, tasks in wrong.items():
        for task, c in tasks.items():
            rows.append(f"| {recipe} | {task} | {c['wrong']} | {c['in_picture']} | {c['not_in_picture']} | "
                        f"{c['not_a_color']} | {c['nearest']} ({c['nearest_chance']:g}) | "
                        f"{c['common']} ({c['common_chance']:g}) |")
    return rows + [""]


def text_table(text: dict) -> list[str]:
    """metrics/text.json: perplexity on the passage per run beside the base model, and the no-picture replies."""
    if not text:
        return []
    rows = [f"The language model's text (`metrics/text.json`): perplexity on the package's passage of plain prose "
            f"({text['passage_tokens']} tokens, no picture), base model {text['base']:g}:", "",
            "| recipe | replicate | perplexity | exactly the base model's | LoRA |", "|---|---:|---:|---|---|"]
    for recipe, reps in text["runs"].items():
        for rep, r in reps.items():
            rows.append(f"| {recipe} | {rep} | {r['perplexity']:g} | {'yes' if r['equals_base'] else 'no'} | "
                        f"{'yes' if r['lora'] else 'no'} |")
    if text.get("positions"):
        rows += ["", "Positions in the sequence (the count question; `metrics/text.json`):", "",
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
            for task, r in tasks.items():
                rows.append(f"| {recipe} | {r['prompt']} | {r['target']} | {r['reply'] or '(nothing)'} |")
    return rows + [""]


def probes_table(probes: dict) -> list[str]:
    """metrics/probes.json: linear-probe accuracy for color and kind per place, seen vs held-out pairs."""
    if not probes:
        return []
    n = probes["shapes"]
    rows = [f"Linear probes (`metrics/probes.json`): a shape's color and kind read from the mean vector under it; "
            f"trained on {n['train']} shapes of training pictures, tested on {n['seen']} seen-pair shapes and "
            f"{n['heldout']} held-out-pair shapes; accuracy %, median [min–max] over replicates (chance: color 16.7, "
            f"kind 33.3):", "", "| read from | replicates | color: seen | color: held-out | kind: seen | kind: held-out |",
            "|---|---:|---:|---:|---:|---:|"]
    order = ["encoder", "stage1", *[p for p in probes["places"] if p not in ("encoder", "stage1")]]
    for place in (p for p in order if p in probes["places"]):
        p = probes["places"][place]
        label = {"encoder": "encoder output", "stage1": "stage-1 connector"}.get(place, f"{place} connector")
        rows.append(f"| {label} | {p['runs']} | {_range(p['color']['seen'])} | {_range(p['color']['heldout'])} | "
                    f"{_range(p['kind']['seen'])} | {_range(p['kind']['heldout'])} |")
    return rows + [""]


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def image_cost_table(cost: dict, bench: dict | None) -> list[str]:
    """metrics/text.json image_cost: one picture's KV cache merged and unmerged, beside the benchmark's step time and
    memory per image-token count (bench/*.json)."""
    if not cost:
        return []
    per = cost["kv_bytes_per_position"]
    rows = [f"What a picture costs (`metrics/text.json`): every position keeps {per:,} bytes of KV cache in bf16 "
            f"(2 × {cost['layers']} layers × key/value heads × head width × 2 bytes); the first test picture's caption "
            f"(\"{cost['caption']}\") is {cost['caption_tokens']} tokens, {_mib(cost['caption_tokens'] * per)}:", "",
            "| picture | patches | KV cache | merged | KV cache |", "|---|---:|---:|---:|---:|"]
    for r in cost["pictures"]:
        rows.append(f"| {r['side_px']} × {r['side_px']} px | {r['patches']} | {_mib(r['patches_kv_bytes'])} | "
                    f"{r['merged']} | {_mib(r['merged_kv_bytes'])} |")
    tokens = [r for r in (bench or {}).get("rows", []) if r["measure"].endswith("image tokens, batch 16")]
    if tokens:
        rows += ["", f"Training step by image tokens (`python -m frozenbridge.bench`, {bench['machine']['device']}):",
                 "", "| image tokens | step, s | saved for backward, MB |", "|---:|---:|---:|"]
        rows += [f"| {r['measure'].split()[0]} | {r['a_value']:.2f} | {r['b_value']:.0f} |" for r in tokens]
    return rows + [""]


def capacity_table(cap: dict) -> list[str]:
    """metrics/capacity.json (on demand): stage 1 merged vs unmerged vs unmerged size-matched."""
    if not cap:
        return []
    rows = ["The capacity check (on demand: `dvc unfreeze capacity && dvc repro capacity`; `metrics/capacity.json`): stage 1 "
            "from scratch three ways; exact seen-pair captions, final loss and seconds a step, median over replicates "
            "(each replicate's exact captions in brackets):", "",
            "| connector | image tokens | parameters | exact captions, % | final loss | s a step |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, c in cap.items():
        each = ", ".join(f"{r['exact']:g}" for r in c["runs"])
        rows.append(f"| {name} | {c['tokens']} | {c['connector_params']:,} | {c['exact']:.2f} ({each}) | "
                    f"{c['final_loss']:.4f} | {c['step_seconds']:.2f} |")
    return rows + [""]


def receipts_table(rec: dict) -> list[str]:
    """metrics/receipts.json: patch embedding = matmul, and who sees the last position."""
    if not rec:
        return []
    patch = rec.get("patch_embedding")
    line = (f"{rec['encoder']}'s patch embedding (a {patch['kernel'][0]}×{patch['kernel'][1]} convolution, stride "
            f"the same) equals flattened patches times one matrix: largest difference {patch['max_difference']:.3g}."
            if patch else f"{rec['patch_embedding_note']}, so the patch-embedding receipt needs a ViT-family "
            "encoder (`vision.name`).")
    moved = rec["encoder_first_moves"]
    encoder = (f"moves the first position's output by up to {moved:.3g} in the encoder ({rec['encoder']})" if moved
               else f"leaves the first position's output unchanged in the encoder too ({rec['encoder']}: a "
                    f"convolution's reach from the top-left cell stops short of the bottom-right patch)")
    return [f"Receipts (`metrics/receipts.json`): {line} Changing only the last input position (the bottom-right "
            f"patch) {encoder}; changing only the last token moves the first position by "
            f"{rec['language_first_moves']:g} in the causal language model ({rec['language']}).", ""]


def shapes_results(metrics: Path, bench: Path, params: dict | None) -> tuple[list[str], list[str]]:
    """(the results tables and the reading from metrics/, the convergence tables from bench/)."""
    parts: list[str] = []
    data, enc = _load(metrics / "data.json"), _load(metrics / "encode.json")
    if data:
        parts += ["Generated data (`metrics/data.json`):", "", *data_table(data), "",
                  *color_kind_table(data["train_color_kind"]), ""]
    if enc:
        parts += ["Cached features (`metrics/encode.json`):", "", *encode_table(enc), ""]
    scores, controls = _load(metrics / "scores.json"), _load(metrics / "controls.json")
    if scores and controls:
        parts += ["Exact match, % (median [min–max] over replicates; gap = right − max(blank, wrong, none)) from "
                  "`metrics/scores.json` and `metrics/controls.json`:", "",
                  *(stage1_table(scores, controls) if "caption" in scores else []), "", *recipe_table(scores), ""]
        reps = _load(metrics / "replicates.json")
        parts += [*paired_table(reps or {}), *reading(scores, controls, reps)]
    parts += paired_analysis_table(_load(metrics / "paired.json") or {})
    wrong = _load(metrics / "wrong_answers.json") or {}
    parts += wrong_answers_table(wrong)
    if wrong and data:
        parts += ["Beside it, the training colors by kind (a kind's two largest are its \"common\" colors):", "",
                  *color_kind_table(data["train_color_kind"]), ""]
    parts += probes_table(_load(metrics / "probes.json") or {})
    text = _load(metrics / "text.json") or {}
    parts += text_table(text)
    parts += image_cost_table(text.get("image_cost"), _load(bench / "cpu-2core.json"))
    parts += capacity_table(_load(metrics / "capacity.json") or {})
    parts += receipts_table(_load(metrics / "receipts.json") or {})
    sweep: list[str] = []
    if (converge := _load(bench / "converge.json")) is not None:
        sweep += [*converge_table(converge, params), ""]
    if (frontier := _load(bench / "converge-heldout.json")) is not None:
        sweep += heldout_curve_table(frontier)
    return parts, sweep


BENCH_FILES = ("converge.json", "converge-heldout.json")  # bench/ files these tables read
