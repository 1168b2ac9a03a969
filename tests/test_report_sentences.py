"""Every sentence the report prints follows its numbers: hand-made metrics in, and the sentence that states a finding
flips when the numbers do; labels come from the metrics (or params.yaml), chance from the set it is chance on; a
setting a run cannot honour is one warning line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from frozenbridge.digits.report.tables import before_sentence
from frozenbridge.onetoken.report import tables as onetoken
from frozenbridge.retrieval.report import tables as retrieval
from frozenbridge.shapes.report import analysis_tables as analysis
from frozenbridge.shapes.report import reading


def spread(median: float, low: float | None = None, high: float | None = None) -> dict:
    return {"median": median, "min": median if low is None else low, "max": median if high is None else high}


# ---- shapes: the reading ----

def _stage1(seen_low: float, held_low: float, control: float):
    scores = {"caption": {"seen": {"caption": {"right": spread(75.0, seen_low, 80.0)}},
                          "heldout": {"caption": {"right": spread(35.0, held_low, 40.0)}}}}
    zero = spread(0.0)
    controls = {"caption": {t: {"caption": {"blank": zero, "wrong": spread(0.0, 0.0, control), "none": zero}}
                            for t in ("seen", "heldout")}}
    return reading.stage1_sentence(scores, controls)


def test_stage1_sentence_says_the_picture_is_read_only_where_every_replicate_beats_every_control():
    text = _stage1(70.0, 30.0, 1.67)
    assert text.startswith("**The model reads the picture.**")
    assert "no replicate gets more than 1.67% right, below every replicate's right-picture score on both" in text
    text = _stage1(70.0, 30.0, 50.0)  # a control as good as the right picture on held-out pairs
    assert text.startswith("**The model reads the picture on seen pairs only.**")
    assert "on held-out pairs the lowest replicate (30%) is not above the best control (50%)" in text
    text = _stage1(70.0, 30.0, 90.0)
    assert text.startswith("**No sign that the model reads the picture.**") and "**The model reads" not in text
    assert "the best control gets as much as or more than the lowest replicate with the right picture" in text


def test_stage2_sentence_counts_the_controls_and_says_which_gaps_clear_zero():
    def scores(binding_low: float) -> dict:
        cell = {"right": spread(90.0), "gap": spread(50.0, 40.0, 60.0)}
        binding = {"right": spread(60.0), "gap": spread(20.0, binding_low, 30.0)}
        return {"caption_qa": {t: {"count": cell, "binding": binding} for t in ("seen", "heldout")}}
    text = reading.stage2_sentence(scores(5.0))
    assert "the best of the four controls" not in text and "the best of the three controls" in text
    assert "Every replicate's gap is above zero on every task and test set." in text
    text = reading.stage2_sentence(scores(-5.0))
    assert ("Every replicate's gap is above zero for count on seen pairs and count on held-out pairs; not for "
            "binding on seen pairs and binding on held-out pairs.") in text


def test_spread_sentence_counts_the_differences_the_ranges_swallow():
    wide = {"right": spread(50.0, 20.0, 80.0)}
    narrow = {"right": spread(90.0, 89.0, 91.0)}
    close = {"right": spread(60.0, 59.0, 61.0)}
    scores = {"qa": {"seen": {"binding": wide}}, "caption_qa": {"seen": {"binding": narrow}},
              "mix": {"seen": {"binding": close}}}
    text = reading.spread_sentence(scores, 3)
    assert text.startswith("**What it cannot show.** The 3 replicates disagree by up to 60 points (qa, binding, seen")
    # |50-90| = 40 and |50-60| = 10 fall inside qa's 60-point range; |90-60| = 30 is wider than both 2-point ranges
    assert "2 of the 3 differences between two recipes' medians" in text
    flat = {"qa": {"seen": {"binding": {"right": spread(50.0)}}}}
    assert "give every score exactly alike" in reading.spread_sentence(flat, 2)


def test_paired_sentence_names_the_test_set_it_reads():
    from frozenbridge.shapes.summary.paired import statistics_of

    reps = {r: {"seen": {"binding": {"0": {"right": 10.0}, "1": {"right": 20.0}}}} for r in ("qa", "caption_qa")}
    pairs = {"qa vs caption_qa": {"seen": {"binding": {**statistics_of([0, 0]), "items": 60}}}}
    text = reading.paired_sentence(reps, pairs, test="seen")
    assert text.startswith("**Captioning first, on seen pairs.** Binding on seen pairs") and "held-out" not in text


# ---- shapes: the analysis tables ----

def _cell(diffs: list[int]) -> dict:
    from frozenbridge.shapes.summary.paired import statistics_of

    return {**statistics_of(diffs), "items": 60}


def test_paired_verdict_says_why_no_difference_is_supported_from_the_replicate_count():
    four = _cell([-5, -6, -7, -8])  # every replicate one way: [min, max] excludes zero but covers 87.5%
    assert analysis.paired_verdict(four, "a", "b") == (
        "no difference supported (4 replicates cannot give an interval of 90% or more, and the sign test cannot go "
        "below p = 0.125 with them)")
    five = _cell([-5, -6, -7, -8, -9])  # 93.75% excludes zero: supported
    assert analysis.paired_verdict(five, "a", "b") == "b ahead: the 93.8% interval excludes zero"
    low = {**four, "replicates": 6, "supported": None}  # a hand-made cell: 6 could reach 90%, this interval does not
    assert analysis.paired_verdict(low, "a", "b").endswith("covers 87.5%, less than the 90% a difference needs")


def test_paired_table_header_states_what_its_own_replicate_counts_can_cover():
    table = analysis.paired_analysis_table({"a vs b": {"seen": {"count": _cell([1, 2])}}})
    assert "2 replicates reach 50% at best" in table[0] and "five" not in table[0]
    table = analysis.paired_analysis_table({"a vs b": {"seen": {"count": _cell([1, 2, 3, 4, 5])}}})
    assert "5 replicates reach 93.75% at best" in table[0]


def test_probe_chance_of_a_three_pair_set_is_its_most_common_class():
    from frozenbridge.shapes.evaluation.probes import chance, chance_levels

    def shapes(color: str, kind: str, n: int) -> list[list[dict]]:
        return [[{"color": color, "kind": kind}] for _ in range(n)]
    held = shapes("red", "triangle", 70) + shapes("green", "circle", 60) + shapes("blue", "square", 50)
    assert chance(held, "color") == {"majority": 38.89, "classes": 3}  # 70 of 180, not one in six colors
    assert chance(held, "kind") == {"majority": 38.89, "classes": 3}
    even = shapes("red", "triangle", 2) + shapes("green", "circle", 2) + shapes("blue", "square", 2)
    assert chance(even, "color") == {"majority": 33.33, "classes": 3}
    assert chance([], "color") == {"majority": 0.0, "classes": 0}
    levels = chance_levels({"heldout": held})
    assert levels["color"]["heldout"]["majority"] == 38.89 and set(levels) == {"color", "kind"}


def _probes(with_chance: bool) -> dict:
    cell = {t: {"seen": spread(99.0), "heldout": spread(60.0, 50.0, 70.0)} for t in ("color", "kind")}
    out = {"shapes": {"train": 100, "seen": 30, "heldout": 18}, "places": {"encoder": {**cell, "runs": 1}}}
    if with_chance:
        out["chance"] = {"color": {"seen": {"majority": 22.44, "classes": 6},
                                   "heldout": {"majority": 37.78, "classes": 3}},
                         "kind": {"seen": {"majority": 35.73, "classes": 3},
                                  "heldout": {"majority": 37.78, "classes": 3}}}
    return out


def test_probe_table_reads_chance_from_probes_json_and_omits_it_when_absent():
    table = analysis.probes_table(_probes(True))
    assert "the seen-pair set holds 6 colors and 3 kinds, the held-out-pair set 3 colors and 3 kinds" in table[0]
    assert "| *chance (the set's most common class)* | — | 22.44 | 37.78 | 35.73 | 37.78 |" in table
    table = analysis.probes_table(_probes(False))
    assert "no chance level" in table[0] and "16.7" not in "\n".join(table) and "33.3" not in "\n".join(table)
    assert not any(row.startswith("| *chance") for row in table)


def test_receipts_and_capacity_follow_what_was_measured():
    base = {"encoder": "cnn", "language": "lm", "patch_embedding": None, "patch_embedding_note": "cnn: not a ViT"}
    text = analysis.receipts_table({**base, "encoder_first_moves": 0.0, "language_first_moves": 0.0})[0]
    assert "leaves the first position's output unchanged in the encoder (cnn: a convolution's reach" in text
    assert "leaves the first position exactly unchanged in the language model (lm)" in text
    text = analysis.receipts_table({**base, "encoder_first_moves": 0.25, "language_first_moves": 0.5})[0]
    assert "moves the first position's output by up to 0.25 in the encoder" in text
    assert "moves the first position by up to 0.5 in the language model" in text and "unchanged" not in text
    vit = {**base, "patch_embedding": {"kernel": [16, 16], "max_difference": 2e-7}, "encoder_first_moves": 0.1,
           "language_first_moves": 0.0}
    assert "equals flattened patches times one matrix up to rounding" in analysis.receipts_table(vit)[0]
    vit["patch_embedding"]["max_difference"] = 0.5
    assert "differs from flattened patches" in analysis.receipts_table(vit)[0]
    run = {"tokens": 49, "connector_params": 10, "runs": [{"exact": 50.0}], "exact": 50.0, "final_loss": 0.1,
           "step_seconds": 1.0}
    assert "from scratch two ways" in analysis.capacity_table({"a": run, "b": run})[0]


# ---- retrieval ----

def _recall(adaptor_long: float, adaptor_short: float) -> dict:
    def tower(long: float, short: float) -> dict:
        by = {"long": long, "short": short}
        return {"recall": {test: {length: {way: {"R@1": spread(v, v - 0.01, v + 0.01)}
                                           for way in ("image_to_text", "text_to_image")}
                                  for length, v in by.items()} for test in ("seen", "heldout")}}
    return {"towers": {"adaptor": tower(adaptor_long, adaptor_short), "scratch": tower(0.5, 0.5)}}


def test_retrieval_reading_turns_with_the_numbers():
    text = retrieval.reading(_recall(0.7, 0.55))  # ahead everywhere, more on long captions
    assert "ahead of the tower trained from scratch in 8 of 8 recall@1 cells, behind in 0 and level in 0" in text
    assert "its lowest replicate is above the other's highest in 8" in text
    assert "here too the difference is larger on long captions (mean +20.0 against +5.0 points)" in text
    text = retrieval.reading(_recall(0.3, 0.55))  # behind on long captions
    assert "ahead of the tower trained from scratch in 4 of 8 recall@1 cells, behind in 4" in text
    assert "here the difference is smaller on long captions than on short ones (mean -20.0 against +5.0" in text
    text = retrieval.reading(_recall(0.505, 0.505))  # within the replicates' ranges
    assert "the two ranges overlap in 8" in text and "the same on long and short captions" in text


# ---- one token ----

def _onetoken_metrics(exact_seen: float, share: tuple[float, float, float]) -> dict:
    rep = {"trainable": 1000, "loss_end": 0.5,
           "floor": {"agreement": 0.0, "by_set": {}, "distinct": 3, "exact": 0.0},
           "trained": {"agreement": 0.2, "distinct": 40, "exact": exact_seen / 2,
                       "by_set": {"seen": {"exact": exact_seen, "pictures": 30},
                                  "heldout": {"exact": 0.0, "pictures": 30}}}}
    lo, mid, hi = share
    return {"available": True, "pictures": 60, "ceiling": 0.5, "scorer": "the retrieval study's adaptor tower",
            "alignment": {"chance": 2.0, "matched": 0.5, "mismatched": 0.0, "own_nearest": 65.0, "pictures": 60},
            "median": {"floor": {"agreement": spread(0.0), "distinct": spread(3), "exact": spread(0.0)},
                       "trained": {"agreement": spread(0.2), "distinct": spread(40), "exact": spread(1.0)},
                       "share_of_gap": {"min": lo, "median": mid, "max": hi}},
            "replicates": {"0": rep}}


def _project(tmp_path, prefix_tokens: int, items: int, seen_pictures: int = 50, heldout_pictures: int = 40):
    """A project folder: params.yaml, metrics/onetoken/ and the shapes metrics the one-token tables read."""
    (tmp_path / "params.yaml").write_text(f"onetoken:\n  prefix_tokens: {prefix_tokens}\n"
                                          f"shapes:\n  evaluate:\n    items: {items}\n")
    metrics = tmp_path / "metrics"
    (metrics / "onetoken").mkdir(parents=True, exist_ok=True)
    (metrics / "shapes").mkdir(exist_ok=True)
    (metrics / "onetoken" / "encode.json").write_text(json.dumps({
        "encoder": "enc", "folder": "data/x", "splits": {"train": {"pictures": 300}}, "width": 8}))
    (metrics / "onetoken" / "scores.json").write_text(json.dumps(_onetoken_metrics(2.0, (0.3, 0.4, 0.5))))
    caption = {t: {"caption": {"right": spread(70.0)}, "distinct_captions": spread(20)} for t in ("seen", "heldout")}
    (metrics / "shapes" / "scores.json").write_text(json.dumps({"caption": caption}))
    (metrics / "shapes" / "text.json").write_text(json.dumps(
        {"positions": {"one picture and text": {"positions": 30, "from_pictures": 16}}}))
    (metrics / "shapes" / "encode.json").write_text(json.dumps({"output_shape": [8, 8, 32]}))
    (metrics / "shapes" / "data.json").write_text(json.dumps(
        {"test_seen": {"pictures": seen_pictures}, "test_heldout": {"pictures": heldout_pictures}}))
    return metrics


def test_onetoken_labels_follow_prefix_tokens_and_the_picture_counts(tmp_path):
    text = "\n".join(onetoken.onetoken_results(_project(tmp_path, 4, 30)))
    assert "-parameter MLP into 4 tokens;" in text and "1 replicate, 60 test pictures" in text
    assert "| 4 tokens from the pooled vector (this study, 60 test pictures) | 2.0% | 0.0% | 40 of 60 |" in text
    assert ("| 16 image tokens from the 8×8 grid (main study, `caption` recipe, 30 pictures a test set) | 70.0% | "
            "70.0% | 20 + 20 of 60 |") in text
    assert "one token" not in text and "49" not in text and "120" not in text
    assert "2.0% from 4 tokens, fewer than the 70.0% the main study's 16 image tokens give" in text
    # items larger than a test set: the label counts what the set holds, as the evaluation does
    text = "\n".join(onetoken.onetoken_results(_project(tmp_path, 1, 500)))
    assert "(main study, `caption` recipe, 50 seen and 40 held-out pictures) | 70.0% | 70.0% | 20 + 20 of 90 |" in text
    assert "MLP into one token;" in text
    # scores.json that records its prefix tokens wins over params.yaml
    m = _onetoken_metrics(2.0, (0.3, 0.4, 0.5))
    assert onetoken.labels({**m, "prefix_tokens": 2}, _project(tmp_path, 4, 30)).prefix_tokens == 2
    # nothing to read them from: no number is guessed
    bare = onetoken.tokens_table(m, {"caption": json.loads((tmp_path / "metrics/shapes/scores.json").read_text())
                                     ["caption"]})
    assert bare[2].startswith("| the prefix tokens from the pooled vector") and "| the image tokens (main study" in \
        bare[4] and bare[4].endswith("| 20 + 20 |")


def test_onetoken_reading_turns_with_the_numbers():
    shapes = {"caption": {"seen": {"caption": {"right": spread(70.0)}}}}
    lab = onetoken.Labels(prefix_tokens=1, grid_tokens=49)
    text = onetoken.reading(_onetoken_metrics(2.0, (0.3, 0.4, 0.5)), shapes, lab)
    assert "closing 40% of the gap, on every replicate (replicates 30% to 50%), more than the 16% the reference" in text
    assert "2.0% from one token, fewer than the 70.0% the main study's 49 image tokens give" in text
    assert "trained on the shapes study's training captions" in text
    text = onetoken.reading(_onetoken_metrics(90.0, (-0.1, 0.05, 0.2)), shapes, lab)
    assert "closing 5% of the gap, but not on every replicate (replicates -10% to 20%), less than the 16%" in text
    assert "90.0% from one token, more than the 70.0%" in text
    text = onetoken.reading(_onetoken_metrics(70.0, (-0.3, -0.2, -0.1)), shapes, lab)
    assert "closing none of the gap (replicates -30% to -10%)" in text and "as many as the 70.0%" in text
    clip = {**_onetoken_metrics(2.0, (0.3, 0.4, 0.5)), "scorer": "CLIP m: its own text tower"}
    text = onetoken.reading(clip, shapes, lab, "data/flickr")
    assert "this space is CLIP m: its own text tower, on `data/flickr`'s pictures" in text
    assert "shapes study's training captions" not in text


# ---- digits ----

def test_digits_before_sentence_turns_with_the_numbers():
    def before(formed: float, distinct: float, right: float) -> dict:
        return {"well_formed": spread(formed), "distinct": spread(distinct), "accuracy": spread(right)}
    text = before_sentence(before(1.0, 1, 0.109), 0.1, 0.113, 10)
    assert text == ("Before any adapter training every caption is already one of the 10 sentences (100% "
                    "well-formed), the same for every picture. They name the right digit 0.109 of the time, no more "
                    "than always naming the most common test digit would (0.113): fluency comes free, grounding "
                    "does not.")
    text = before_sentence(before(1.0, 7, 0.4), 0.1, 0.113, 10)
    assert "7 distinct captions" in text and "above the 0.113 that ignoring the picture can reach" in text
    assert "grounding does not" not in text
    text = before_sentence(before(0.2, 50, 0.05), 0.25, None, 4)
    assert "20% of the captions are one of the 4 sentences" in text and "no more than chance (0.250)" in text
    assert text.endswith(": not yet fluent.")


# ---- a setting the run cannot honour ----

def test_evaluate_items_larger_than_a_test_set_is_one_warning_line(caplog):
    from frozenbridge.shapes.data.splits import generate_split, split_seeds
    from frozenbridge.shapes.evaluation.scoring import eval_items
    from frozenbridge.shapes.params import DataParams, SplitSizes
    from frozenbridge.shapes.training.split_data import SplitData

    table = generate_split("train", 6, DataParams(image_size=64, sizes=SplitSizes(train=6)), split_seeds(0)["train"])
    data = SplitData(table.column("caption").to_pylist(), table.column("questions").to_pylist(),
                     table.column("shapes").to_pylist(), None, {})
    with caplog.at_level(logging.WARNING, logger="frozenbridge.shapes"):
        items = eval_items(data, 500, "seen")
    lines = [r for r in caplog.records if r.name == "frozenbridge.shapes"]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    counts = {task: len(rows) for task, rows in items.items()}
    assert counts["caption"] == 6
    message = lines[0].getMessage()
    assert message.startswith("shapes.evaluate.items=500: the seen test set holds 6 pictures, ")
    assert f"{counts['count']} count questions" in message
    assert message.endswith("; evaluating those instead of 500 each")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="frozenbridge.shapes"):
        eval_items(data, 1, "seen")  # every task has at least one item: nothing to say
    assert not [r for r in caplog.records if r.name == "frozenbridge.shapes"]


@pytest.mark.parametrize("n", [6, 7])
def test_a_single_short_task_names_what_is_used(n):
    from frozenbridge.shapes.evaluation.scoring import short_of

    rows = {"caption": [0] * 6, "count": [0] * 9}
    line = short_of(n, rows, "heldout")
    if n == 6:
        assert line is None
    else:
        assert line == "shapes.evaluate.items=7: the held-out test set holds 6 pictures; evaluating 6"


def test_two_picture_pairs_short_of_items_say_so_in_one_line(caplog):
    """Three pictures with a triangle and two without make two pairs; asking for five logs what is asked instead."""
    from frozenbridge.shapes.evaluation.two_pictures import picture_pairs

    tri, sq = [{"kind": "triangle"}], [{"kind": "square"}]
    with caplog.at_level("WARNING", logger="frozenbridge.shapes"):
        pairs = picture_pairs([tri, sq, tri, tri, sq], 5)
    assert pairs == [(0, 1), (4, 2)]
    assert [r.getMessage() for r in caplog.records] == [
        "shapes.evaluate.items=5: the seen test set makes 2 two-picture pairs (3 pictures with a triangle, 2 "
        "without); asking 2"]
    caplog.clear()
    with caplog.at_level("WARNING", logger="frozenbridge.shapes"):
        assert picture_pairs([tri, sq, tri, tri, sq], 2) == [(0, 1), (4, 2)]
    assert not caplog.records


def test_a_heatmap_asked_for_more_pictures_than_the_set_holds_says_so(caplog, tmp_path):
    """onetoken.agreement.shown larger than the test set: one warning line, and the heatmap shows what there is."""
    import numpy as np

    from frozenbridge.onetoken.summary.figures import alignment_heatmap

    files = []
    for i in range(3):
        from PIL import Image

        Image.new("RGB", (8, 8), (40 * i, 0, 0)).save(tmp_path / f"{i}.png")
        files.append(str(tmp_path / f"{i}.png"))
    check = {"matched": 0.5, "mismatched": 0.1, "own_nearest": 100.0, "chance": 33.33, "pictures": 3}
    with caplog.at_level("WARNING", logger="frozenbridge.onetoken"):
        alignment_heatmap(np.eye(3), ["a", "b", "c"], files, check, "clip", tmp_path / "h.png", 8)
    assert [r.getMessage() for r in caplog.records] == [
        "onetoken.agreement.shown=8: the test set holds 3 pictures; showing 3"]
    assert (tmp_path / "h.png").stat().st_size > 1000


def test_the_digits_limits_table_names_the_words_an_lm_cannot_write(tmp_path):
    """results/digits-limits rendered: one row a setting, and the missing words read from each LM's captions."""
    import json
    import shutil

    from frozenbridge.digits.report.tables import limits_results

    root = Path(__file__).resolve().parents[1] / "results" / "digits-limits"
    lines = limits_results(root)
    settings = json.loads((root / "limits.json").read_text())["settings"]
    assert sum(line.startswith(f"| {name} |") for name in settings for line in lines) == len(settings)
    folder = tmp_path / "digits-limits"
    shutil.copytree(root, folder)
    reach = json.loads((folder / "reachable.json").read_text())
    reach["runs/digits/language"]["captions"][3] = "the digit is thre"  # one more word it cannot write
    (folder / "reachable.json").write_text(json.dumps(reach))
    row = next(line for line in limits_results(folder) if line.startswith("| `runs/digits/language`"))
    assert "| zero, three |" in row


# ---- the README's line on command one ----

def test_command_one_time_counts_replicates_from_stage_names_and_sums_the_first_two():
    """Five replicates' stages (shared ones, foreach and matrix ones) in; the line names five, the whole run's time and
    the shared stages plus replicates 0 and 1; a timed run with other replicates than params.yaml says so."""
    from frozenbridge.tools.report import command_one_time

    stages = {"shapes_data": 60.0, "shapes_summarize": 30.0, "shapes_gallery@caption_qa": 10.0}
    for rep in range(5):
        stages |= {f"shapes_train@qa-{rep}": 100.0, f"onetoken_train@{rep}": 20.0, f"digits_train@8-{rep}": 5.0}
    saved = {"total_seconds": sum(stages.values()), "stages": stages, "benchmark_step_seconds": 1.0,
             "machine": {"cpu": "2 cores, x86_64", "cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16"}}
    line = command_one_time(saved, 5)[1]
    assert "5 replicates of every study) took **12 min 05 s**" in line  # 100 + 5 * 125 = 725 s
    assert "replicates 0 and 1 took 5 min 50 s." in line and "now names" not in line  # 100 + 2 * 125 = 350 s
    assert command_one_time(saved, 2)[1].endswith("That timed run had 5 replicates; params.yaml now names 2.")
    two = {k: v for k, v in stages.items() if not k.endswith(("-2", "-3", "-4", "@2", "@3", "@4"))}
    short = command_one_time({**saved, "stages": two, "total_seconds": 350.0}, 2)[1]
    assert "2 replicates of every study" in short and "Fewer replicates" not in short


def test_a_timing_older_than_the_pipeline_names_the_stages_its_time_leaves_out(tmp_path):
    """The timed run had one audit run; today's dvc.lock trains five and checks them: the README's line, the results
    page's time and the first screen each name the six stages the time leaves out, and say nothing once it has them."""
    from frozenbridge.tools.first_screen import finding
    from frozenbridge.tools.report import command_one_time
    from frozenbridge.tools.repro_report import repro_time, untimed

    saved = {"total_seconds": 600.0, "stages": {"shapes_data": 100.0, "audit_train": 500.0}, "skipped_stages": [],
             "training_steps_seconds": 0.0, "training_steps_by_stage": {},
             "benchmark_step_seconds": 1.0, "stage_count": 2, "categories": {"data": 100.0, "audit study": 500.0},
             "machine": {"cpu": "2 cores, x86_64", "device": "cpu", "date": "2026-12-06", "torch": "2.13",
                         "cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16"}}
    now = ["shapes_data", *(f"audit_train@{r}" for r in range(5)), "audit_check"]
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages:\n" + "".join(f"  {n}:\n    cmd: x\n" for n in now))
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "headline.json").write_text(
        '{"headline": {"shapes": {"caption_exact_seen": 70, "caption_exact_heldout": 40}}}')
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "repro.json").write_text(__import__("json").dumps(saved))
    said = ("That run predates 6 of the pipeline's 7 stages (audit_train@0, audit_train@1, audit_train@2, "
            "audit_train@3, audit_train@4, audit_check), which its time leaves out.")
    assert untimed(saved, tmp_path) == (now[1:], 7)
    assert command_one_time(saved, 0, tmp_path)[1].endswith(said)
    assert said in repro_time(saved, tmp_path)[0]
    assert finding(tmp_path, None)[0].endswith(said)
    timed = {**saved, "stages": {n: 1.0 for n in now}}
    assert "predates" not in command_one_time(timed, 5, tmp_path)[1] + repro_time(timed, tmp_path)[0]
    assert untimed(saved, None) == ([], 0)
