"""What-if's "why:" lines and explain's one-knob changes read as sentences with units, not as the engine's
records: "GPU memory 80 → 141 GiB", "SP on → off", "does not fit" — they printed "gpu_memory: before_gib=80,
after_gib=141, …", "sequence_parallel True → False" and "does_not_fit". The --json output keeps the records.
"""

import json

from shardwise.present import count_noun, knob_change, signed
from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k",
            "--global-batch-tokens", "4M"]


def test_a_difference_that_rounds_to_zero_has_no_minus_sign():
    assert signed(-0.001, "GiB") == "+0.00 GiB"  # printed 0.00, so no sign says it shrank
    assert signed(-0.006, "GiB") == "−0.01 GiB"
    assert signed(-0.00001, "s") == "+0.0 ms"
    assert signed(-0.0012, "s") == "−1.2 ms"


def test_knobs_are_named_as_the_plan_label_names_them():
    assert knob_change("sequence_parallel", True, False) == "SP on → off"
    assert knob_change("zero_stage", 3, 1) == "ZeRO 3 → 1"
    assert knob_change("micro_batch", 1, 2) == "micro-batch 1 → 2"
    assert count_noun(1, "other plan") == "1 other plan" and count_noun(21, "other plan") == "21 other plans"


def test_what_if_reasons_are_sentences_with_units(capsys):
    code, text, err = run(capsys, "what-if", *SCENARIO, "--change", "gpu=h200")
    assert code == 0, err
    code, out, err = run(capsys, "what-if", *SCENARIO, "--change", "gpu=h200", "--json")
    record = json.loads(out)
    why = text.split("\nwhy:\n", 1)[1]
    # The spec sheets: H100 SXM 80 GB HBM3 at 3.35 TB/s, H200 141 GB HBM3e at 4.8 TB/s (shardwise gpus ID lists them).
    fitting = next(r["numbers"] for r in record["reasons"] if r["rule"] == "gpu_memory")
    assert (f"GPU memory 80 → 141 GiB: {fitting['fitting_before']:,} → {fitting['fitting_after']:,} plans fit"
            in why)
    assert "HBM bandwidth 3,350 → 4,800 GB/s per GPU" in why
    assert "=" not in why and "_s" not in why and "True" not in why


def test_explain_counterfactuals_use_plan_words(capsys):
    code, text, err = run(capsys, "explain", *SCENARIO, "--a", "tp=4,pp=2", "--b", "tp=2,cp=2,zero=3")
    assert code == 0, err
    knobs = text.split("one-knob changes to the winner:\n", 1)[1]
    assert "SP on → off" in knobs and "ZeRO 3 → 1" in knobs  # the winner B runs SP and ZeRO-3
    assert "does_not_fit" not in knobs and "does not fit" in knobs
    assert "sequence_parallel" not in knobs and "zero_stage" not in knobs and "−0.00" not in text


def test_memory_categories_agree_with_their_verb():
    from shardwise.cli.explain import _grows

    # TERM_LABELS name four memory categories in the plural ("activations", "weights", "gradients",
    # "optimizer states") and "total memory"/"other" in the singular; the binding line read "activations grows".
    assert _grows("activations") == "activations grow" and _grows("total memory") == "total memory grows"


def test_a_plan_that_does_not_fit_says_so_on_its_line(capsys):
    # TP=4 PP=2 for Llama-3.1-70B at 8K on 80 GiB H100s does not fit (README: 115.23 GiB); its line read
    # "memory 115.2 of 80 GiB" with nothing more, and one plan alone was called "the winner".
    code, text, err = run(capsys, "explain", *SCENARIO, "--a", "tp=4,pp=2")
    assert code == 0, err
    assert text.splitlines()[1].endswith("of 80 GiB — DOES NOT FIT")
    assert "one-knob changes to this plan:" in text and "to the winner" not in text
