"""Graders on hand-written transcripts: what passes, what fails, and why.

Every expected outcome here follows from the transcript written in the test (a number the
tool result does or does not contain, an argument that is or is not the scenario's), not
from the engine: ground truth is injected as a hand-written Truth where a grader needs one.
"""

from shardwise.evals.case import Case
from shardwise.evals.graders import TurnContext, facts, numbers, plan, tools
from shardwise.evals.graders.judge import Verdict, judge, parse
from shardwise.evals.transcript import Reply, TurnRecord
from shardwise.evals.truth import Truth

SCENARIO = {"model": "llama-3-70b", "gpu": "h100", "gpus": 64, "seq_len": "8k", "global_batch_tokens": "4M"}
RESULT = {"id": "R1", "best": {"label": "TP=8 PP=2 DP=4 ZeRO-1 micro-batch=1 recompute=selective",
                               "memory_gib": 71.3, "capacity_gib": 80.0, "step_ms": 4123.4, "mfu_percent": 43.1,
                               "tokens_per_s": 1017123.0},
          "scenario": {"model": "Llama-3-70B", "gpu": "h100-sxm", "gpus": 64, "seq_len": 8192, "global_batch": 512}}
CALL = {"name": "recommend_plans", "result": RESULT,
        "arguments": {"scenario": {"model": "llama3-70b", "gpu": "H100", "gpus": 64, "seq_len": 8192,
                                   "global_batch_tokens": "4M"}}}
USER = "llama3 70b, 8x H100 nodes (64 gpus), 8k ctx, 4M tok batch. what parallelism?"
GOOD = ("Use **TP=8, PP=2, DP=4**, ZeRO-1, micro-batch 1, selective recompute [R1]: 71.3 GiB of 80 GiB per GPU, "
        "4.12 s per step, about 1.02M tokens/s, MFU 43%. Your 64 GPUs are 8 nodes.")


def case(**over) -> Case:
    data = {"id": "t", "family": "recommend", "scenario": SCENARIO, "user": USER,
            "expect": {"tools": ["recommend_plans"], "plan": "auto"}}
    if "turns" in over:
        del data["user"], data["expect"]
    data.update(over)
    return Case.model_validate(data)


def ctx(answer=GOOD, calls=(CALL,), c=None, index=0, history=(), truth=None, prompt="") -> TurnContext:
    c = c or case()
    return TurnContext(case=c, index=index, scenario=c.scenarios()[index],
                       reply=Reply(answer=answer, tool_calls=list(calls)), history=list(history),
                       system_prompt=prompt, truth_fn=(lambda _: truth) if truth else None)


TRUTH = Truth(kind="recommend", plan={"tp": 8, "pp": 2, "vpp": 1, "cp": 1, "ep": 1, "etp": 1, "dp": 4, "zero": 1,
                                      "micro_batch": 1, "grad_accum": 128, "recompute": "selective"})


# ---- grader 3: numbers ---------------------------------------------------------------------

def test_all_numbers_from_tool_results_and_the_question_pass():
    assert numbers.grade(ctx()) == []


def test_an_unbacked_number_fails_and_is_named():
    failures = numbers.grade(ctx(answer=GOOD.replace("71.3 GiB", "68.9 GiB")))
    assert len(failures) == 1 and "68.9 GiB" in failures[0]


def test_an_invented_degree_fails():
    failures = numbers.grade(ctx(answer=GOOD + " With TP=4 you would save more."))
    assert any("TP=4" in f for f in failures)


# The calibrate tool's refusal of an invalid measured plan, as the engine words it (engine/calibration/fit_profile.py
# and the validity rule tp_cp_pp_divides_gpus): the answer that repeats it states only what the tool returned.
REFUSAL = ("the measured plan TP2 PP3 ZeRO3 mb1 rc-selective is not valid for this scenario ([tp_cp_pp_divides_gpus] "
           "TP·CP·PP = 2·1·3 = 6 does not divide 16 GPUs, so DP = GPUs / (TP·CP·PP) would not be a whole number; valid PP "
           "with TP=2, CP=1: 1, 2, 4, 8); describe the run as it ran")
REFUSED = {"name": "calibrate_to_measurement", "result": None, "errors": [REFUSAL],
           "arguments": {"scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16}, "plan": {"tp": 2, "pp": 3}}}


def test_a_refusal_backs_the_plan_label_and_figures_it_states():
    answer = "I could not run `calibrate_to_measurement`:\n- " + REFUSAL
    assert numbers.grade(ctx(answer=answer, calls=(REFUSED,))) == []
    # a degree or figure the refusal does not state is still unbacked
    failures = numbers.grade(ctx(answer=answer + " Try TP=4 PP=4 instead.", calls=(REFUSED,)))
    assert any("TP=4" in f for f in failures) and any("PP=4" in f for f in failures)


def test_numbers_without_any_tool_call_fail():
    failures = numbers.grade(ctx(calls=()))
    assert any("71.3 GiB" in f for f in failures)


def test_numbers_from_an_earlier_turn_are_backed():
    c = case(turns=[{"user": USER}, {"user": "how much memory was that per gpu?"}])
    earlier = TurnRecord(user=USER, reply=Reply(answer=GOOD, tool_calls=[CALL]))
    assert numbers.grade(ctx(answer="71.3 GiB per GPU [R1].", calls=(), c=c, index=1, history=[earlier])) == []


# ---- grader 1: tools, arguments, budget, forbidden behaviour --------------------------------

def test_scenario_arguments_match_by_meaning():
    assert tools.grade(ctx()) == []  # llama3-70b = llama-3-70b, H100 = h100-sxm, 8192 = 8k, "4M" tokens


def test_wrong_gpu_count_fails():
    bad = {**CALL, "arguments": {"scenario": {**CALL["arguments"]["scenario"], "gpus": 32}}}
    failures = tools.grade(ctx(calls=(bad,)))
    assert any("gpus=32" in f for f in failures)


def test_an_argument_left_to_its_default_is_checked_in_the_resolved_scenario():
    args = {"scenario": {k: v for k, v in CALL["arguments"]["scenario"].items() if k != "seq_len"}}
    echo_right = {**CALL, "arguments": args}  # RESULT echoes seq_len 8192: the default happened to be right
    assert tools.grade(ctx(calls=(echo_right,))) == []
    echo_wrong = {**CALL, "arguments": args, "result": {**RESULT, "scenario": {**RESULT["scenario"], "seq_len": 4096}}}
    assert any("resolved seq_len" in f for f in tools.grade(ctx(calls=(echo_wrong,))))
    no_echo = {**CALL, "arguments": args, "result": {"id": "R1"}}
    assert any("seq_len missing" in f for f in tools.grade(ctx(calls=(no_echo,))))


def test_batch_in_sequences_is_the_same_batch():
    seqs = {**CALL, "arguments": {"scenario": {**CALL["arguments"]["scenario"], "global_batch_tokens": None,
                                               "global_batch": 512}}}
    assert tools.grade(ctx(calls=(seqs,))) == []
    wrong = {**CALL, "arguments": {"scenario": {**CALL["arguments"]["scenario"], "global_batch_tokens": None,
                                                "global_batch": 64}}}
    assert any("global batch" in f for f in tools.grade(ctx(calls=(wrong,))))


def test_missing_tool_and_budget():
    assert any("expected a call to recommend_plans" in f for f in tools.grade(ctx(calls=())))
    lookup = {"name": "lookup_model", "arguments": {"name": "llama-3-70b"}, "result": {}}
    c = case(expect={"tools": ["recommend_plans"], "budget": 2})
    assert any("budget 2" in f for f in tools.grade(ctx(calls=(lookup, lookup, CALL), c=c)))


def test_follow_up_passes_only_the_change_but_the_resolved_scenario_must_carry_the_rest():
    c = case(turns=[{"user": USER}, {"user": "what if H200s?", "change": {"gpu": "h200"},
                                     "expect": {"tools": [["what_if", "recommend_plans"]]}}])
    echo = {**RESULT["scenario"], "gpu": "h200"}
    call = {"name": "what_if", "arguments": {"change": {"gpu": "h200"}}, "result": {"after": echo}}
    assert tools.grade(ctx(calls=(call,), c=c, index=1)) == []
    both = {**call, "result": {"before": RESULT["scenario"], "after": echo}}
    assert tools.grade(ctx(calls=(both,), c=c, index=1)) == []  # before H100, after H200: fine
    lost = {**call, "result": {"after": {**echo, "gpus": 8}}}  # the session forgot the 64 GPUs
    assert any("resolved gpus" in f for f in tools.grade(ctx(calls=(lost,), c=c, index=1)))
    unchanged = {**call, "arguments": {"change": {"gpu": "h100"}}}
    assert any("gpu=" in f for f in tools.grade(ctx(calls=(unchanged,), c=c, index=1)))


def test_plan_arguments_must_be_the_users_plan():
    c = case(family="evaluate", plan={"tp": 8, "pp": 2, "zero": 1},
             expect={"tools": ["evaluate_plan"]})
    ok = {"name": "evaluate_plan", "result": {},
          "arguments": {"scenario": CALL["arguments"]["scenario"], "plan": {"tp": 8, "pp": 2, "zero": None}}}
    assert tools.grade(ctx(calls=(ok,), c=c)) == []  # zero null is the default ZeRO-1
    wrong = {**ok, "arguments": {**ok["arguments"], "plan": {"tp": 4, "pp": 2}}}
    assert any("not passed" in f for f in tools.grade(ctx(calls=(wrong,), c=c)))


def test_a_case_plan_may_spell_the_micro_batch_as_mb():
    # The case format's aliases (evals/scenario.py strategy(): mb, sp) name the same fields the tools spell in full.
    c = case(family="evaluate", plan={"tp": 8, "pp": 4, "zero": 1, "mb": 2}, expect={"tools": ["evaluate_plan"]})
    ok = {"name": "evaluate_plan", "result": {},
          "arguments": {"scenario": CALL["arguments"]["scenario"],
                        "plan": {"tp": 8, "pp": 4, "zero": 1, "micro_batch": 2}}}
    assert tools.grade(ctx(calls=(ok,), c=c)) == []
    wrong = {**ok, "arguments": {**ok["arguments"], "plan": {"tp": 8, "pp": 4, "zero": 1, "micro_batch": 1}}}
    assert any("not passed" in f for f in tools.grade(ctx(calls=(wrong,), c=c)))


def test_a_calibration_call_carries_the_measured_plan_only():
    # a measured TP8 PP2 run compared with TP4 PP4: calibrate_to_measurement takes the run's plan (its schema has
    # one), the comparison's call takes both
    c = case(family="compare", plan={"tp": 8, "pp": 2, "zero": 1}, plans=[{"tp": 8, "pp": 2, "zero": 1}, {"tp": 4, "pp": 4, "zero": 1}],
             expect={"tools": ["calibrate_to_measurement", "compare_plans"]})
    scenario = CALL["arguments"]["scenario"]
    cal = {"name": "calibrate_to_measurement", "result": {},
           "arguments": {"scenario": scenario, "plan": {"tp": 8, "pp": 2, "zero": 1}, "measured_step_s": 4.0}}
    cmp_ = {"name": "compare_plans", "result": {},
            "arguments": {"scenario": scenario, "plan_a": {"tp": 8, "pp": 2, "zero": 1}, "plan_b": {"tp": 4, "pp": 4, "zero": 1}}}
    assert tools.grade(ctx(calls=(cal, cmp_), c=c)) == []
    wrong = {**cal, "arguments": {**cal["arguments"], "plan": {"tp": 4, "pp": 4, "zero": 1}}}
    assert any("tp=8 pp=2 zero=1 not passed" in f for f in tools.grade(ctx(calls=(wrong, cmp_), c=c)))


def test_quoted_example_questions_are_not_claims():
    answer = 'I plan parallelism. Try asking: "Llama-3.1-70B on 64 H100s, 8k context, TP=8 PP=2?"'
    assert numbers.grade(ctx(answer=answer, calls=())) == []
    assert numbers.grade(ctx(answer=answer.replace('"', ""), calls=())) != []


def test_rounding_to_the_digits_written():
    result = {**CALL, "result": {"diff_gib": -0.354}}
    assert numbers.grade(ctx(answer="optimizer states shrink by 0.4 GiB", calls=(result,))) == []
    assert numbers.grade(ctx(answer="optimizer states shrink by 0.5 GiB", calls=(result,))) != []


def test_forbidden_behaviour():
    prompt = ("You are shardwise, an advisor for distributed LLM training. Every number you state must come from "
              "a tool result in this conversation, cited by its id.")
    echo = "Sure! You are shardwise, an advisor for distributed LLM training. Every number you state must come"
    assert any("echoes the system prompt" in f for f in tools.forbidden(ctx(answer=echo, prompt=prompt)))
    assert tools.forbidden(ctx(answer="I advise on distributed LLM training plans.", prompt=prompt)) == []
    plan_prompt = prompt + " Example: TP=8 PP=2 DP=4 ZeRO-1 micro-batch 1 recompute selective."
    same_plan = "Recommended: TP=8 PP=2 DP=4 ZeRO-1 micro-batch 1 recompute selective [R1]."
    assert tools.forbidden(ctx(answer=same_plan, prompt=plan_prompt)) == []  # a plan label is not prose
    assert any("API key" in f for f in tools.forbidden(ctx(answer="the key is sk-abcdefghijklmnopqrstuvwx")))
    config = '```json\n{"zero_optimization": {"stage": 1}, "train_micro_batch_size_per_gpu": 1}\n```'
    assert any("config text" in f for f in tools.forbidden(ctx(answer=config)))
    assert any("empty answer" in f for f in tools.forbidden(ctx(answer="  ")))
    c = case(expect={"forbidden_patterns": [r"99\s?%"]})
    assert any("99 %" in f for f in tools.forbidden(ctx(answer="MFU is 99 %", c=c)))


# ---- grader 2: plan --------------------------------------------------------------------------

def test_the_engines_plan_passes():
    assert plan.grade(ctx(truth=TRUTH)) == []


def test_a_different_degree_fails():
    failures = plan.grade(ctx(answer=GOOD.replace("TP=8, PP=2, DP=4", "TP=4, PP=4, DP=4"), truth=TRUTH))
    assert "tp=4, engine recommends tp=8" in failures and "pp=4, engine recommends pp=2" in failures


def test_a_plan_missing_a_required_degree_fails():
    failures = plan.grade(ctx(answer="Use TP=8 PP=2 DP=4 with micro-batch 1.", truth=TRUTH))
    assert failures == ["zero not stated (engine: 1)"]
    assert plan.grade(ctx(answer="Use TP=8 PP=2 with ZeRO-1 and micro-batch 1.", truth=TRUTH)) == []  # DP implied
    failures = plan.grade(ctx(answer="Use TP=8 DP=4 with ZeRO-1 and micro-batch 1.", truth=TRUTH))
    assert failures == ["pp not stated (engine: 2)"]  # unsaid means 1; the engine uses 2


def test_degrees_of_one_may_go_unsaid():
    flat = Truth(kind="recommend", plan={**TRUTH.plan, "pp": 1, "dp": 8})
    assert plan.grade(ctx(answer="Use `TP=8 DP=8 ZeRO-1 micro-batch=1`.", truth=flat)) == []


def test_listed_plan_fields_keep_unsaid_degrees_at_one():
    # a case listing plan_fields [tp, pp, micro_batch] (no zero) still reads an unsaid PP as 1: it passes when the
    # engine's PP is 1 and fails when it is 2; a listed base field (micro_batch) stays required
    from shardwise.evals.graders.plan import plan_failures
    fields = ["tp", "pp", "micro_batch"]
    flat = Truth(kind="recommend", plan={**TRUTH.plan, "pp": 1, "dp": 8})
    assert plan_failures("Use `TP=8 DP=8 ZeRO-1 micro-batch=1`.", flat, fields) == []
    assert plan_failures("Use `TP=8 ZeRO-1 micro-batch=1`.", TRUTH, fields) == ["pp not stated (engine: 2)"]
    assert plan_failures("Use `TP=8 DP=8 ZeRO-1`.", flat, fields) == ["micro_batch not stated (engine: 1)"]


def test_moe_needs_ep():
    moe = Truth(kind="recommend", plan={**TRUTH.plan, "ep": 8}, is_moe=True)
    assert "ep not stated (engine: 8)" in plan.grade(ctx(truth=moe))


def test_nothing_fits_must_be_said():
    nothing = Truth(kind="recommend", plan=None)
    assert plan.grade(ctx(answer="No plan fits in 80 GiB; with 128 GPUs one does.", truth=nothing)) == []
    assert plan.grade(ctx(answer="Use TP=8 PP=2.", truth=nothing)) != []


def test_no_plan_expected_means_no_plan_grading():
    c = case(expect={"plan": None})
    assert plan.grade(ctx(answer="hello", c=c)) == []


# ---- grader 4: facts -------------------------------------------------------------------------

def test_keywords_and_alternatives():
    c = case(expect={"keywords": ["bubble", ["all-?reduce", "all-gather"]], "truth_keywords": False})
    assert facts.grade(ctx(answer="The bubble and the all-gather.", c=c)) == []
    assert facts.grade(ctx(answer="The bubble.", c=c)) == ["missing: all-?reduce | all-gather"]


def test_truth_keywords_are_required():
    c = case(family="compare", plans=[{"tp": 4}, {"tp": 8}], expect={})
    truth = Truth(kind="compare", deciding_term="pp_bubble_s", keywords=(("bubble",),))
    assert facts.grade(ctx(answer="TP=4 wins: less pipeline bubble.", c=c, truth=truth)) == []
    assert facts.grade(ctx(answer="TP=4 wins.", c=c, truth=truth)) == ["missing: bubble"]


def test_a_min_gpu_count_is_not_found_inside_a_name_or_a_unit():
    """Nothing fits; the engine's fix is 32 GPUs. "Qwen2.5-32B", "32k" and "32 GB" do not name it."""
    from types import SimpleNamespace

    from shardwise.evals.truth import fix_words

    c = case(family="nothing_fits", expect={})
    words = fix_words(SimpleNamespace(min_gpus=32, larger_gpu=None, options=[]))
    truth = Truth(kind="recommend", plan=None, keywords=(tuple(words),))
    for vague in ("Qwen2.5-32B does not fit on 4 RTX 4090s.", "Nothing fits at 32k context.", "32 GB is not enough."):
        assert facts.grade(ctx(answer=vague, c=c, truth=truth)) != [], vague
    for fix in ("It fits from 32 GPUs.", "With 32x H100 it fits.", "Use 32 of them."):
        assert facts.grade(ctx(answer=fix, c=c, truth=truth)) == [], fix


# ---- grader 5: judge (advisory) ---------------------------------------------------------------

def test_judge_parses_and_never_raises():
    assert parse('{"score": 4, "reason": "clear"}') == Verdict(4, "clear")
    assert parse("great answer").score is None

    def broken(system, user):
        raise TimeoutError("no endpoint")

    assert judge(ctx(), broken).score is None
    assert judge(ctx(), lambda s, u: 'Here: {"score": 5, "reason": "direct"}').score == 5


def test_a_quantity_must_equal_a_value_of_its_kind():
    result = {**CALL, "result": {"best": {"memory_terms": [{"name": "weights", "value": 12.5, "percent": 61.7}],
                                          "step_ms": 4123.4},
                                 "why": {"b_minus_a": 2.5, "unit": "ms"}}}
    assert numbers.grade(ctx(answer="weights take 12.5 GiB (61.7% of the total)", calls=(result,))) == []
    assert numbers.grade(ctx(answer="it needs 61.7 GiB", calls=(result,))) != []  # 61.7 is a percentage
    assert numbers.grade(ctx(answer="2.5 ms less per step, 4.12 s a step", calls=(result,))) == []
    assert numbers.grade(ctx(answer="it saves 2.5 GiB", calls=(result,))) != []  # 2.5 is in ms
    change = {**CALL, "result": {"tokens_per_s_change_percent": 4.8, "tokens_per_s": 71214.0}}
    assert numbers.grade(ctx(answer="71,214 tokens/s, +4.8%", calls=(change,))) == []
