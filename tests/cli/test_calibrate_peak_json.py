"""`calibrate --json` carries the measured peak's analysis the text prints: outside the predicted band, and what
--zero / --recompute changed alone predicts (it returned the profile only)."""

import json
import re

from support.cli_runner import run

# Llama-3.1-70B, TP4 PP4 ZeRO-1 on 64 H100s, 8k x 512 (the calibration tests' run). Its weights alone are
# 70.55e9 x 2 B / (TP4 x PP4) = 8.2 GiB per GPU and its fp32 Adam states 70.55e9 x 12 B / (16 x DP4) = 12.3 GiB:
# with gradients and activations the predicted peak is far above a 30 GiB measurement, so the band cannot hold it.
RUN = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k", "--global-batch", "512",
       "--tp", "4", "--pp", "4", "--measured-tokens-per-s-per-gpu", "850"]


def test_a_peak_the_plan_does_not_explain_is_in_the_json_as_the_text_says_it(capsys, tmp_path):
    code, text, err = run(capsys, "calibrate", *RUN, "--measured-peak-gib", "30")
    assert code == 0, err
    path = tmp_path / "p.json"
    code, out, err = run(capsys, "calibrate", *RUN, "--measured-peak-gib", "30", "--json", "--save", path)
    assert code == 0, err
    r = json.loads(out)["runs"][0]
    low, high = r["predicted_peak_likely_gib"]
    assert 30 < low <= r["predicted_peak_gib"] <= high and r["peak_explained"] is False
    # the same alternatives, in the same order, as the text's "changed alone" lines (two surfaces, one analysis)
    said = re.findall(r"^\s+--(recompute|zero) (\S+)\s+([\d.]+) GiB", text, re.M)
    assert [(a["setting"], str(a["value"]), f"{a['predicted_gib']:.1f}") for a in r["peak_alternatives"]] == \
        [("zero_stage" if s == "zero" else s, v, g) for s, v, g in said]
    assert not any(a["holds_measured"] for a in r["peak_alternatives"]) and "none holds 30.0 GiB" in text
    # the saved profile, analysis included, is still a profile the other commands read
    code, _, err = run(capsys, "evaluate", *RUN[:14], "--profile", path)
    assert code == 0, err


def test_a_peak_inside_the_band_is_explained_with_no_alternatives(capsys):
    code, out, err = run(capsys, "calibrate", *RUN, "--json")
    predicted = json.loads(out)["runs"][0]
    assert predicted["peak_explained"] is None and predicted["peak_alternatives"] == []  # no peak measured
    code, out, err = run(capsys, "calibrate", *RUN, "--measured-peak-gib", "75", "--json")
    r = json.loads(out)["runs"][0]
    inside = r["predicted_peak_likely_gib"][0] <= 75 <= r["predicted_peak_likely_gib"][1]
    assert r["peak_explained"] is inside and (r["peak_alternatives"] == []) is inside
