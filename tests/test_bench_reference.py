"""The reference-sizes benchmark at toy sizes, end to end: the study's train and evaluate, timed steps, memory, and
the derived time of the full reference study."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys


def test_bench_reference_tiny_end_to_end(tmp_path):
    out = tmp_path / "bench" / "reference.json"
    proc = subprocess.run([sys.executable, "-m", "frozenbridge.bench", "reference", "--tiny", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "FROZENBRIDGE_DEVICE": "cpu"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    runs = result["runs"]
    assert set(runs) == {"stage1", "caption_qa", "caption_qa_lora"}
    for r in runs.values():
        assert r["steps"] == 3 and len(r["step_s"]) == 3
        assert math.isfinite(r["median_step_s"]) and r["median_step_s"] > 0
        assert r["median_step_s"] == statistics.median(r["step_s"][1:])  # the first step is the warm-up
        assert r["saved_for_backward_mb"] > 0 and math.isfinite(r["final_loss"])
    assert runs["caption_qa_lora"]["lora_params"] > 0 and runs["stage1"]["image_tokens"] == 49
    assert result["memory"]["peak_rss_mb"] > 0
    assert result["encode"]["s_per_picture"] > 0
    ev = result["evaluation"]
    assert set(ev["scores"]) == {"caption", "count", "binding", "leftmost"} and ev["seconds"] > 0
    assert all(0 <= s["right"] <= 100 and s["n"] > 0 for s in ev["scores"].values())

    s1, q, lora = (runs[k]["median_step_s"] for k in ("stage1", "caption_qa", "caption_qa_lora"))
    expected = 400 * s1 + 400 * s1 * 3.05 / 1.02 + 3 * 800 * q + 3 * 400 * q + 3 * 400 * lora
    study = result["study"]
    assert math.isclose(study["seconds"], expected, rel_tol=1e-9)
    reference = 400 * 1.02 + 400 * 3.05 + 3 * 800 * 0.89 + 3 * 400 * 0.91 + 3 * 400 * 1.11
    assert math.isclose(study["reference_seconds"], reference, rel_tol=1e-9)
    assert math.isclose(study["ratio_to_reference"], expected / reference, rel_tol=1e-9)
    assert "3 x 800 q" in study["formula"] and study["formula"] in proc.stdout
    assert result["configs"]["train"]["batch_size"] == 16 and result["machine"]["device"]
    assert result["machine"]["tool"] == "python -m frozenbridge.bench reference"
