"""Reading the recommended plan out of an answer's prose."""

from shardwise.evals.plan_text import stated_plan


def test_labels_and_prose():
    assert stated_plan("Use **TP=8, PP=4, DP=2**, ZeRO-1, micro-batch 1, selective recompute.") == {
        "tp": 8, "pp": 4, "dp": 2, "zero": 1, "micro_batch": 1, "recompute": "selective"}
    assert stated_plan("8-way tensor parallelism, 4 pipeline stages, data parallel size 2, ZeRO stage 1, "
                       "full activation recomputation") == {"tp": 8, "pp": 4, "dp": 2, "zero": 1, "recompute": "full"}


def test_the_first_paragraph_with_a_plan_wins():
    text = "For 64 H100s:\n\nTP=4 PP=2 DP=8 ZeRO-1 mb=1\n\nAn alternative is TP=8 PP=1 DP=8."
    assert stated_plan(text)["tp"] == 4


def test_markdown_table():
    text = "| TP | PP | DP | ZeRO | micro-batch | recompute |\n|---|---|---|---|---|---|\n| 8 | 2 | 4 | 1 | 1 | selective |"
    assert stated_plan(text) == {"tp": 8, "pp": 2, "dp": 4, "zero": 1, "micro_batch": 1, "recompute": "selective"}


def test_fsdp_means_zero_3_and_no_plan_is_none():
    assert stated_plan("FSDP over 8 GPUs, TP 1, PP 1")["zero"] == 3
    assert stated_plan("Nothing fits on 8 GPUs; try 16.") is None


def test_the_target_of_a_change_is_the_recommendation():
    text = "The best plan changes from `TP=8 DP=8 ZeRO-3 micro-batch=2` to **`TP=2 DP=32 ZeRO-3 micro-batch=1`**."
    assert stated_plan(text) == {"tp": 2, "dp": 32, "zero": 3, "micro_batch": 1}


def test_a_rejected_plan_before_the_recommendation_is_skipped():
    text = "TP=16 is not possible on 8 GPUs. The recommended plan is TP=1 DP=8 ZeRO-3 micro-batch=2."
    assert stated_plan(text)["tp"] == 1
    assert stated_plan("Why not TP=8? Because TP=4 PP=2 DP=8 is faster.")["tp"] == 4


def test_degrees_spread_over_a_paragraph_are_joined():
    assert stated_plan("Use TP=8 and PP=2. Keep ZeRO-1 and micro-batch 1.") == {
        "tp": 8, "pp": 2, "zero": 1, "micro_batch": 1}


def test_a_lone_degree_is_knob_talk_not_a_plan():
    text = ("**nanotron cannot express `TP=2 EP=4 ETP=2 ZeRO-2 micro-batch=1`**: it has no expert parallelism "
            "(use EP=1, or export megatron).")
    assert stated_plan(text)["ep"] == 4
    assert stated_plan("Use TP=8.") == {"tp": 8}


def test_quoted_example_questions_are_not_plans():
    assert stated_plan('I can evaluate a plan you have in mind: "how about TP=8 PP=2 ZeRO-1?"') is None


def test_a_cue_word_counts_only_as_a_whole_word():
    # "because" ends in "use" and "this" in "is": neither marks the plan after it as the one chosen
    text = "**TP=1 DP=32 ZeRO-2 micro-batch=1 wins because TP=1 DP=32 ZeRO-1 micro-batch=1 is out of memory.**"
    assert stated_plan(text)["zero"] == 2
