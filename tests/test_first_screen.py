"""README's first paragraph (tools.first_screen) is made of the numbers the files hold: change one and it changes;
no metrics, no paragraph."""

from __future__ import annotations

import json


def _project(root, seen=76.67, heldout=41.67, seconds=3556.1, device="cpu"):
    (root / "metrics").mkdir()
    (root / "bench").mkdir()
    (root / "params.yaml").write_text("language: {name: smollm2-135m}\nreplicates: [0, 1]\n")
    (root / "metrics/headline.json").write_text(json.dumps(
        {"headline": {"shapes": {"caption_exact_seen": seen, "caption_exact_heldout": heldout}}}))
    (root / "bench/repro.json").write_text(json.dumps({
        "total_seconds": seconds, "stages": {"shapes_stage1@0": 1.0, "shapes_stage1@1": 1.0},
        "machine": {"cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16", "device": device, "cpu": "2 cores"}}))


def test_the_paragraph_says_the_files_numbers(tmp_path):
    from frozenbridge.tools.first_screen import finding

    _project(tmp_path)
    text, = finding(tmp_path, (14, 12, 14))
    assert "the frozen `smollm2-135m` writes the exact caption of a median 76.67% of test pictures" in text
    assert "and 41.67% of pictures of pairs it never saw" in text
    assert "Of the 40 claims of the four reference studies, 14 hold here, 12 do not and 14 are not yet settled" in text
    assert "at 2 paired replicates took 59 minutes on a CPU with no GPU, the AMD EPYC (AVX512-BF16)." in text


def test_other_numbers_give_another_paragraph_and_no_metrics_none(tmp_path):
    from frozenbridge.tools.first_screen import finding

    assert finding(tmp_path, None) == []
    _project(tmp_path, seen=90.0, heldout=12.5, seconds=9000.0, device="cuda")
    text, = finding(tmp_path, None)
    assert "90% of test pictures" in text and "12.5% of pictures" in text and "took 2.5 hours on the AMD" in text
    assert "claims" not in text and "no GPU" not in text
