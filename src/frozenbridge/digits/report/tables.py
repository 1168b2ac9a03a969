"""The digits study's report table, from metrics/digits/, beside the reference's numbers."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.summary import read_all, read_json_if_present

# tiny-models-digit-captioning (the reference): its classifier's test accuracy, its 8-token adapter after 24 epochs,
# and what it says of one prefix token ("barely beat chance", no number given)
REFERENCE = {"ceiling": 0.9307, "adapter": 0.9220, "language_loss": 0.1206, "adapter_parameters": 37440}
HEADLINE_REFERENCE = {"classifier_accuracy": f"{REFERENCE['ceiling']}",
                      "adapter_8_tokens_accuracy": f"{REFERENCE['adapter']}",
                      "adapter_1_token_accuracy": "barely above chance (no number given)"}


def _spread(s: dict) -> str:
    return f"{s['median']:.4f} [{s['min']:.4f}–{s['max']:.4f}]"


def digits_results(metrics: Path) -> list[str]:
    if (found := read_all(metrics / "digits", "data.json", "classifier.json", "language.json", "adapter.json")) is None:
        return []
    data, cls, lang, adapter = found
    by = adapter["by_tokens"]
    rows = [f"**Digits study** (`metrics/digits/`): {data['source']}; {data['train']:,} training and {data['test']:,} "
            f"test pictures. The classifier ({cls['parameters']:,} parameters, a {cls['vector_width']}-number vector "
            f"a picture) and the character LM ({lang['parameters']:,} parameters, final loss "
            f"{lang['final_loss']:.4f}; reference {REFERENCE['language_loss']}) are trained here and frozen; with only "
            f"its null in front the LM writes \"{lang['with_null_prefix']}\". Captions naming the right digit, "
            "median [min–max] over replicates:", "",
            "| | ours | reference |", "|---|---:|---:|",
            f"| classifier's test accuracy (the ceiling) | {cls['test_accuracy']:.4f} | {REFERENCE['ceiling']} |"]
    for tokens in sorted(by, key=int, reverse=True):
        t = by[tokens]
        ref = REFERENCE["adapter"] if int(tokens) == 8 else "barely above chance" if int(tokens) == 1 else "—"
        rows.append(f"| adapter, {tokens} prefix token{'s' if int(tokens) > 1 else ''} ({t['trainable']:,} trainable), "
                    f"after the last epoch | {_spread(t['accuracy'])} | {ref} |")
    first = by[max(by, key=int)]
    classes = len(data.get("per_digit", {}).get("test", [])) or round(1 / adapter["chance"])
    rows += [f"| chance (one of {classes} digits) | {adapter['chance']} | 0.1 |", "",
             "| prefix tokens | share of the ceiling | before training: right / well-formed / distinct captions | "
             "after: well-formed | after: distinct | LM weights unchanged |", "|---:|---:|---|---:|---:|---|"]
    for tokens in sorted(by, key=int, reverse=True):
        t = by[tokens]
        b = t["before"]
        rows.append(f"| {tokens} | {t['share_of_ceiling']:.1%} | {b['accuracy']['median']:.3f} / "
                    f"{b['well_formed']['median']:.0%} / {b['distinct']['median']:g} (\"{b['example']}\") | "
                    f"{t['well_formed']['median']:.1%} | {t['distinct']['median']:g} | "
                    f"{'yes' if t['language_unchanged'] else 'NO'} |")
    rows += ["", before_sentence(first["before"], adapter["chance"], cls.get("most_common_test_digit_share"),
                                 classes), "", "![digits accuracy per epoch](plots/digits/accuracy.png)", ""]
    return rows


def before_sentence(before: dict, chance: float, most_common: float | None, classes: int) -> str:
    """What the captions are before any adapter training, in words the numbers choose: fluent or not, one caption
    for every picture or several, right no more often than always naming one digit would be, or more."""
    formed, distinct, right = (before[k]["median"] for k in ("well_formed", "distinct", "accuracy"))
    blind = max(chance, most_common or 0.0)  # what a caption that ignores the picture can score at best
    fluent = (f"every caption is already one of the {classes} sentences (100% well-formed)" if formed == 1
              else f"{formed:.0%} of the captions are one of the {classes} sentences")
    same = ("the same for every picture" if distinct == 1 else f"{distinct:g} distinct captions")
    baseline = ("always naming the most common test digit would" if most_common and most_common >= chance
                else "chance")
    grounded = (f"they name the right digit {right:.3f} of the time, no more than {baseline} ({blind:.3f})"
                if right <= blind else
                f"they name the right digit {right:.3f} of the time, above the {blind:.3f} that ignoring the "
                "picture can reach")
    if formed >= 0.99 and right <= blind:
        verdict = ": fluency comes free, grounding does not"
    elif formed >= 0.99:
        verdict = ": fluent, and already above what ignoring the picture gives"
    else:
        verdict = ": not yet fluent"
    return f"Before any adapter training {fluent}, {same}. {grounded[0].upper()}{grounded[1:]}{verdict}."


WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def limits_results(folder: Path) -> list[str]:
    """results/digits-limits/ (`python -m frozenbridge.digits.sweeps.limits`, `... .reachable`): the adapter's
    accuracy with one factor changed at a time, the vector's own ceilings, and which digit words each frozen
    character LM can be steered to write at all; the sentences follow the numbers."""
    exp, limits = read_json_if_present(folder / "experiment.json"), read_json_if_present(folder / "limits.json")
    if exp is None or limits is None:
        return []
    ceiling = limits["ceiling"]
    out = [f"**On-demand experiment `{exp['name']}`** (`{exp['command']}` on commit {str(exp['commit'])[:7]}; kept "
           f"in `results/{folder.name}/`). {exp['note'][0].upper()}{exp['note'][1:].rstrip('.')}.", "",
           f"The adapter's test accuracy (8 prefix tokens) per setting, against the classifier's {ceiling:g}:", "",
           "| setting | factor | LM seed, steps | per replicate | worst / ceiling | zeros right | seconds |",
           "|---|---|---|---|---:|---|---:|"]
    for name, s in limits["settings"].items():
        reps = s["replicates"].values()
        zeros = ", ".join(f"{r['per_digit']['accuracy'][0]:.2f}" for r in reps)
        accuracies = ", ".join(f"{r['accuracy']:.3f}" for r in reps)
        out.append(f"| {name} | {s['factor']} | {s['settings']['lm_seed']}, {s['settings']['lm_steps']} | "
                   f"{accuracies} | {s['share_of_ceiling_worst']:.1%} | {zeros} | {s['seconds']:g} |")
    v = limits["vector"]
    out += ["", f"What the classifier's vector ({v['vector']['width']} wide, {v['vector']['dead_units']} units never "
            f"active) holds: its head {v['head']['test']:g}, a fresh linear probe {v['linear_probe']['test']:g}, an "
            f"MLP probe shaped like the adapter's first layer {v['mlp_probe_adapter_shape']['test']:g}."]
    reach = read_json_if_present(folder / "reachable.json")
    if reach:
        out += ["", "Which words each frozen character LM writes from a free prefix fitted per digit (the most any "
                "adapter could give it):", "", "| LM | words written | missing | P(first letter of \"zero\") |",
                "|---|---:|---|---:|"]
        for lm, r in reach.items():
            missing = [w for w, c in zip(WORDS, r["captions"], strict=True) if not c.endswith(" " + w)]
            out.append(f"| `{lm}` | {r['words_written']} of 10 | {', '.join(missing) or '—'} | "
                       f"{r['first_letter_p'][0]:g} |")
    default = limits["settings"].get("default")
    if default and reach and "runs/digits/language" in reach:
        zeros = [r["per_digit"]["accuracy"][0] for r in default["replicates"].values()]
        out += ["", f"With the LM the committed default trained then, the adapter named zeros right in "
                f"{', '.join(f'{z:.0%}' for z in zeros)} of the cases, and that LM writes "
                f"{reach['runs/digits/language']['words_written']} of the 10 words from the free prefixes fitted "
                "to it."]
    return out + [""]
