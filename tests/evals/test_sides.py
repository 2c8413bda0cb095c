"""Side-by-side grading ("the best plan on H100 and on H200") on hand-written answers.

Ground truth is injected: each side's recommended plan is written here (TRUTHS), so every
expected outcome follows from the answer text in the test, not from the engine. The tool
results are hand-written too; the numbers in the answers are copied from them.
"""

import pytest
from pydantic import ValidationError

from shardwise.evals.case import Case
from shardwise.evals.graders import TurnContext, numbers, plan, tools
from shardwise.evals.side_text import side_texts
from shardwise.evals.transcript import Reply
from shardwise.evals.truth import Truth

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16, "seq_len": "64k", "global_batch": 64}
USER = "llama-3.1-8b, 64k seqs, gbs 64, 16 gpus: h100 or h200? best plan on each"
SIDES = [{"label": "H100", "expect": {"plan": "auto"}},
         {"label": "H200", "change": {"gpu": "h200"}, "expect": {"plan": "auto"}}]


def _plan(cp: int, dp: int) -> dict:
    return {"tp": 1, "pp": 1, "vpp": 1, "cp": cp, "ep": 1, "etp": 1, "dp": dp, "zero": 2, "micro_batch": 1,
            "grad_accum": 1, "recompute": "none"}


# What the engine is made to recommend: CP=8 DP=2 on the H100 (80 GiB), CP=4 DP=4 on the H200 (141 GiB).
TRUTHS = {"h100": Truth(kind="recommend", plan=_plan(8, 2)), "h200": Truth(kind="recommend", plan=_plan(4, 4))}
H100_PLAN = "TP=1 CP=8 DP=2 ZeRO-2 micro-batch=1"
H200_PLAN = "TP=1 CP=4 DP=4 ZeRO-2 micro-batch=1"


def _call(gpu: str, label: str, memory: float, capacity: float, step_s: float, tokens: float, rid: str) -> dict:
    return {"name": "recommend_plans",
            "arguments": {"scenario": {"model": "llama-3.1-8b", "gpu": gpu, "gpus": 16, "seq_len": 65536,
                                       "global_batch": 64}},
            "result": {"id": rid, "best": {"label": label, "memory_gib": memory, "capacity_gib": capacity,
                                           "step_s": step_s, "tokens_per_s": tokens}}}


CALLS = [_call("h100-sxm", H100_PLAN, 69.7, 80.0, 53.6, 78303.0, "R1"),
         _call("h200", H200_PLAN, 113.7, 141.0, 52.2, 80330.0, "R2")]

TABLE = f"""**Side by side**, the best plan for each setup:

| | NVIDIA H100 SXM5 80GB [R1] | NVIDIA H200 SXM 141GB [R2] |
|---|---|---|
| best plan | `{H100_PLAN}` | `{H200_PLAN}` |
| memory per GPU (GiB) | 69.7 of 80 | 113.7 of 141 |
| step | 53.6 s | 52.2 s |

**H200 is faster** [R1, R2]."""

PROSE = f"""Both fit; the layouts differ in how far context parallelism has to go.

On the H100 the best plan is {H100_PLAN}: 69.7 GiB of 80 GiB, 53.6 s per step [R1].
On the H200, use {H200_PLAN}, at 113.7 GiB of 141 GiB and 52.2 s per step [R2]."""

HEADINGS = f"""### H100

Use {H100_PLAN} [R1]. It needs 69.7 GiB per GPU.

### H200

Use {H200_PLAN} [R2]. It needs 113.7 GiB per GPU."""


def case(sides=None, **expect) -> Case:
    return Case.model_validate({"id": "t", "family": "whatif", "scenario": SCENARIO, "user": USER,
                                "sides": SIDES if sides is None else sides,
                                "expect": {"tools": ["recommend_plans"], **expect}})


def ctx(answer: str, calls=CALLS, c=None) -> TurnContext:
    c = c or case()
    return TurnContext(case=c, index=0, scenario=c.scenarios()[0], reply=Reply(answer=answer, tool_calls=list(calls)),
                       side_truth_fn=lambda s: TRUTHS["h200" if s.gpu == "h200" else "h100"])


# ---- each side's plan, whatever the layout ----------------------------------------------

@pytest.mark.parametrize("answer", [TABLE, PROSE, HEADINGS], ids=["table", "prose", "headings"])
def test_each_side_stating_its_own_plan_passes(answer):
    assert plan.grade(ctx(answer)) == []


def test_a_heading_in_words_opens_its_sides_section():
    answer = (f"**On the H100**\n\n{H100_PLAN}.\n\nIf you rent H200 nodes instead:\n\n{H200_PLAN}.\n\n"
              "Both fit in memory.")
    assert plan.grade(ctx(answer)) == []


def test_a_heading_from_one_side_to_the_other_opens_the_second():
    answer = (f"On the H100 use {H100_PLAN} [R1].\n\n**What if gpu H100 → H200?** [R2]\n\n"
              f"The best plan changes to **`{H200_PLAN}`**.")
    assert plan.grade(ctx(answer)) == []


def test_a_short_sentence_naming_a_side_is_not_a_heading():
    # "H200 is faster." is a sentence, not a heading: the next paragraph belongs to no side.
    answer = f"On the H100 the plan is {H100_PLAN}.\n\nH200 is faster.\n\n{H200_PLAN}."
    assert "H200 side: no plan stated" in plan.grade(ctx(answer))[0]


def test_two_sides_on_one_line_are_split_at_each_name():
    answer = f"On H100: {H100_PLAN}; on H200: {H200_PLAN}."
    assert plan.grade(ctx(answer)) == []


def test_a_side_named_in_brackets_is_an_aside():
    answer = (f"On H100 the plan is {H100_PLAN}.\n"
              f"On H200 CP can drop from 8 (which the H100 needs) to 4: {H200_PLAN}.")
    assert plan.grade(ctx(answer)) == []


def test_a_table_with_a_row_per_side_is_read_row_by_row():
    answer = ("| setup | TP | CP | DP | ZeRO | micro-batch |\n|---|---|---|---|---|---|\n"
              "| H100 | 1 | 8 | 2 | 2 | 1 |\n| H200 | 1 | 4 | 4 | 2 | 1 |")
    texts = side_texts(answer, [["H100"], ["H200"]])
    assert "| H100 |" in texts[0] and "H200" not in texts[0]
    assert plan.grade(ctx(answer)) == []


def test_swapped_sides_fail_on_both_sides():
    swapped = TABLE.replace(f"`{H100_PLAN}` | `{H200_PLAN}`", f"`{H200_PLAN}` | `{H100_PLAN}`")
    failures = plan.grade(ctx(swapped))
    assert any(f.startswith("H100 side: cp=4") for f in failures)
    assert any(f.startswith("H200 side: cp=8") for f in failures)


def test_a_side_the_answer_never_names_fails():
    answer = f"On the H100 the best plan is {H100_PLAN} [R1]."
    failures = plan.grade(ctx(answer))
    assert failures == ["H200 side: the answer never names it (label ['H200'])"]


def test_the_plan_right_on_one_side_only_fails_that_side_only():
    answer = PROSE.replace(f"use {H200_PLAN}", "use TP=1 CP=2 DP=8 ZeRO-2 micro-batch=1")
    failures = plan.grade(ctx(answer))
    assert failures and all(f.startswith("H200 side:") for f in failures)
    assert "H200 side: cp=2, engine recommends cp=4" in failures


def test_a_side_without_a_plan_expectation_is_not_graded_but_still_splits_the_answer():
    # "what plan at H200, and how much faster than H100?": only the H200 plan is asked for.
    sides = [{"label": "H100"}, {"label": "H200", "change": {"gpu": "h200"}, "expect": {"plan": "auto"}}]
    assert plan.grade(ctx(TABLE, c=case(sides))) == []
    answer_h200_only_wrong = TABLE.replace(f"`{H200_PLAN}`", f"`{H100_PLAN}`")
    assert plan.grade(ctx(answer_h200_only_wrong, c=case(sides)))


def test_a_label_starts_a_word_and_may_run_on():
    texts = side_texts("LoRA: TP=1 CP=2 DP=1.\nQLoRA: TP=2 DP=1.", [["LoRA"], ["QLoRA"]])
    assert texts == ["LoRA: TP=1 CP=2 DP=1.", "QLoRA: TP=2 DP=1."]
    texts = side_texts("Llama-3.1-8B: TP=1 DP=16.\nQwen2.5-7B: TP=2 DP=8.", [["llama"], ["qwen"]])
    assert texts == ["Llama-3.1-8B: TP=1 DP=16.", "Qwen2.5-7B: TP=2 DP=8."]


def test_nothing_fits_on_one_side_must_be_said_for_that_side():
    truths = {"h100": Truth(kind="recommend", plan=None), "h200": TRUTHS["h200"]}
    c = case()
    said = f"On the H100 nothing fits in memory.\nOn the H200, use {H200_PLAN}."
    unsaid = f"On the H100, use {H100_PLAN}.\nOn the H200 nothing fits in memory, use {H200_PLAN}."
    grade = lambda a: plan.grade(TurnContext(case=c, index=0, scenario=c.scenarios()[0],  # noqa: E731
                                             reply=Reply(answer=a), side_truth_fn=lambda s: truths[s.gpu]))
    assert grade(said) == []
    assert "H100 side: the engine finds no plan that fits, and the answer does not say so" in grade(unsaid)


# ---- each side's numbers ----------------------------------------------------------------

@pytest.mark.parametrize("answer", [TABLE, PROSE, HEADINGS], ids=["table", "prose", "headings"])
def test_figures_under_their_own_side_pass(answer):
    assert numbers.grade(ctx(answer)) == []


def test_a_figure_under_the_other_side_fails():
    # 113.7 GiB is the H200 result's memory (CALLS); here it is written under the H100.
    answer = PROSE.replace("69.7 GiB of 80 GiB", "113.7 GiB of 80 GiB")
    failures = numbers.grade(ctx(answer))
    assert failures == ["'113.7 GiB' is stated for H100 but is H200's figure"]


def test_a_line_comparing_the_sides_is_not_attributed():
    answer = PROSE + "\nH200 steps in 52.2 s against 53.6 s on the H100."
    assert numbers.grade(ctx(answer)) == []


def test_a_line_that_compares_is_not_attributed_even_if_it_names_one_side():
    # 53.6 s is the H100's step (CALLS), quoted in a comparison under the H200 heading.
    answer = HEADINGS + "\nIt steps in 52.2 s vs 53.6 s."
    assert numbers.grade(ctx(answer)) == []
    assert numbers.grade(ctx(HEADINGS + "\nIt steps in 53.6 s.")) == ["'53.6 s' is stated for H200 but is H100's figure"]


# ---- each side's tool call --------------------------------------------------------------

def test_a_call_for_each_side_is_needed():
    assert tools.grade(ctx(TABLE)) == []
    failures = tools.grade(ctx(TABLE, calls=CALLS[:1]))
    assert len(failures) == 1 and failures[0].startswith("H200 side: recommend_plans(") and "gpu=" in failures[0]


# ---- the case format --------------------------------------------------------------------

def test_the_case_format_rejects_a_turn_level_plan_or_a_single_side():
    with pytest.raises(ValidationError, match="per side"):
        case(plan="auto")
    with pytest.raises(ValidationError, match="two sides"):
        case(sides=SIDES[:1])
    with pytest.raises(ValidationError, match="own label"):
        case(sides=[SIDES[0], {**SIDES[1], "label": "h100"}])


def test_each_side_scenario_is_the_turns_with_the_sides_change():
    c = case()
    first, second = c.turns[0].side_scenarios(c.scenarios()[0])
    assert (first.gpu, second.gpu) == ("h100", "h200")
    assert second.gpus == 16 and second.seq_len == "64k"
