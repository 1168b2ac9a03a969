"""The results page's reruns section is read from the saved measurement: a condition whose reruns kept the reference's
bytes moves nothing, one that changed bits is named with the fields that moved."""

from __future__ import annotations

import json

from frozenbridge.tools.rerun_report import rerun_section


def test_the_section_names_the_condition_that_changed_bits(tmp_path):
    same = {"model/connector.pt": "same", "result.json": "same"}
    saved = {"what": "onetoken_train@3 rerun under each condition",
             "machine": {"cpu_model": "AMD EPYC", "bf16_path": "AVX512-BF16"},
             "conditions": [
                 {"condition": "default", "command": "python -m frozenbridge.tools.rerun_check onetoken_train@3",
                  "reruns": [{"against_reference": "same"}, {"against_reference": same}],
                  "same_bytes_as_reference": "2 of 2 reruns", "same_bytes_among_its_reruns": True},
                 {"condition": "isa", "command": "python -m frozenbridge.tools.rerun_check onetoken_train@3 "
                                                 "--env ONEDNN_MAX_CPU_ISA=AVX512_CORE",
                  "reruns": [{"against_reference": {"model/connector.pt": "differs",
                                                    "result.json": {"captions[].floor": "98 of 240"}}}],
                  "same_bytes_as_reference": "0 of 1 reruns", "same_bytes_among_its_reruns": True}]}
    (tmp_path / "reruns").mkdir()
    (tmp_path / "reruns" / "x.json").write_text(json.dumps(saved))
    text = "\n".join(rerun_section(tmp_path))
    assert "On the AMD EPYC (AVX512-BF16), onetoken_train@3 was rerun one condition at a time" in text
    assert "Its 2 reruns under 1 of the 2 conditions gave the reference's bytes." in text
    assert "Only `onetoken_train@3 --env ONEDNN_MAX_CPU_ISA=AVX512_CORE` changed bits" in text
    assert "| `onetoken_train@3` | 2 of 2 reruns | yes | nothing |" in text
    assert "model/connector.pt differs; captions[].floor 98 of 240 |" in text
    assert rerun_section(tmp_path / "none") == []
