"""The offline planner's reading model (agent/planner/reading.py) end to end through ChatService: several
requests in one message answered in the order asked, follow-ups about the plan on the table, two
scenarios side by side, one short question when a message reads two ways, the "understood" line and a
fine-tune's default batch. Phrasings are our own, not the eval cases'. Expected values come from the
sentences (read by hand) or from an earlier tool result of the same conversation (the plan the
follow-up points at), never from the planner's own reading."""

from __future__ import annotations

import pytest

from shardwise.agent.events import DoneEvent
from shardwise.agent.planner.clauses import split_clauses
from shardwise.agent.planner.entities import normalise
from shardwise.agent.planner.knobs import find_plans
from shardwise.agent.planner.sides import scenario_sides

KNOBS = ("tp", "pp", "vpp", "cp", "ep", "etp", "micro_batch", "recompute")


def ask(service, *messages):
    """[(tool calls [(name, arguments, result)], answer)] for each turn of one conversation."""
    session, out = None, []
    for message in messages:
        done = next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))
        session = done.session_id
        out.append(([(c["name"], c["arguments"], c.get("result")) for c in done.tool_calls], done.answer))
    return out


def names(calls) -> list[str]:
    return [name for name, _, _ in calls]


def is_plan(args_plan: dict, strategy: dict) -> bool:
    """A plan passed to a tool is the one a result reported (StrategySummary: zero is `zero_stage`)."""
    return all(args_plan[k] == strategy[k] for k in KNOBS) and args_plan["zero"] == strategy["zero_stage"]


# ---- several requests in one message, in the order asked -----------------------------------------------

def test_what_setup_and_why_not_a_degree_recommends_then_compares_the_winner(make_service):
    [(calls, answer)] = ask(make_service(), "Fine-tuning Mistral 7B fully on 8 H100s with 2k sequences. Which layout "
                                            "would you go with, and why not pipeline parallel 2?")
    assert names(calls) == ["recommend_plans", "recommend_plans", "compare_plans"]
    first, pinned, compare = calls
    assert first[1]["constraints"] is None and pinned[1]["constraints"] == {"pp": 2}
    assert first[1]["scenario"]["seq_len"] == 2 * 1024 and first[1]["scenario"]["gpus"] == 8
    assert is_plan(compare[1]["plan_a"], first[2]["best"]["strategy"])  # the winner …
    assert is_plan(compare[1]["plan_b"], pinned[2]["best"]["strategy"]) and compare[1]["plan_b"]["pp"] == 2  # … vs PP=2
    assert answer.index("[R1]") < answer.index("[R3]")  # answered in the order asked


def test_plan_then_what_if_then_export_of_the_what_if_winner(make_service):
    [(calls, _)] = ask(make_service(), "best plan for llama 3 8b on 16 a100s, then what if we upgraded to H200s, "
                                       "and export the torchtitan toml for it")
    assert names(calls) == ["recommend_plans", "what_if", "export_config"]
    assert calls[1][1]["change"]["gpu"] == "h200" and calls[1][1]["scenario"]["gpu"] == "a100-80gb"
    export = calls[2][1]
    assert export["format"] == "torchtitan" and export["scenario"]["gpu"] == "h200"
    assert is_plan(export["plan"], calls[1][2]["after_best"]["strategy"])  # "it" is the what-if's winner


def test_best_layout_then_memory_per_gpu(make_service):
    [(calls, _)] = ask(make_service(), "phi-4 on 4 L40S. best layout? also how much memory does each gpu need")
    assert names(calls) == ["recommend_plans", "estimate_memory"]
    assert calls[1][1]["scenario"]["gpu"] == "l40s" and calls[1][1]["scenario"]["gpus"] == 4


def test_a_concept_then_a_plan(make_service):
    [(calls, _)] = ask(make_service(), "what is ZeRO-3 actually doing, and which stage would you pick for "
                                       "llama 3 8b on 8 H100?")
    assert names(calls) == ["explain_concept", "recommend_plans"]
    assert calls[0][1]["concept"] == "zero" and calls[0][1]["scenario"]["gpus"] == 8


def test_a_named_plan_checked_then_something_faster_asked_for(make_service):
    [(calls, _)] = ask(make_service(), "we run mistral 7b on 16 a100 with tp2 pp2 zero1 mb1, 4k, gbs 256. "
                                       "is there anything faster?")
    assert names(calls) == ["recommend_plans", "compare_plans"]
    assert calls[0][1]["constraints"] is None  # the best plan, not the best with their degrees
    ours = {"tp": 2, "pp": 2, "zero": 1, "micro_batch": 1}
    assert {k: calls[1][1]["plan_b"][k] for k in ours} == ours
    assert is_plan(calls[1][1]["plan_a"], calls[0][2]["best"]["strategy"])


# ---- follow-ups about the plan on the table --------------------------------------------------------------

def test_a_plan_cited_from_a_recipe_is_compared_with_the_one_on_the_table(make_service):
    [(first, _), (calls, answer)] = ask(make_service(), "Llama 3.1 70B on 64 H100s, 8k context",
                                        "how does it stack up against TP=4 PP=2 as in the nemo recipe?")
    assert names(calls) == ["compare_plans"]  # not a NeMo export: the recipe is where the plan comes from
    args = calls[0][1]
    assert is_plan(args["plan_a"], first[0][2]["best"]["strategy"])
    assert (args["plan_b"]["tp"], args["plan_b"]["pp"]) == (4, 2)
    assert args["scenario"]["framework"] is None


def test_why_not_a_degree_after_a_what_if_compares_with_the_what_if_winner(make_service):
    turns = ask(make_service(), "llama 3 8b on 16 a100", "what if we had twice the gpus?", "why not TP=8 for that?")
    (_, _), (what_if, _), (calls, _) = turns
    assert what_if[0][1]["change"]["gpus"] == 32
    compare = calls[-1]
    assert compare[0] == "compare_plans" and compare[1]["scenario"]["gpus"] == 32
    assert is_plan(compare[1]["plan_a"], what_if[0][2]["after_best"]["strategy"])
    assert compare[1]["plan_b"]["tp"] == 8


def test_degrees_in_words_two_values_of_one_knob(make_service):
    [_, (calls, _)] = ask(make_service(), "mixtral 8x7b on 32 h100", "expert parallel 4 or 8 - which wins?")
    compare = calls[-1][1]
    assert calls[-1][0] == "compare_plans" and (compare["plan_a"]["ep"], compare["plan_b"]["ep"]) == (4, 8)


def test_our_current_setup_is_the_plan_the_user_said_they_run(make_service):
    _, (calls, _) = ask(make_service(), "we run mistral 7b on 16 a100 with tp2 pp2 zero1 mb1, 4k, gbs 256. "
                                        "is there anything faster?", "and our current setup with mb 2?")
    assert names(calls) == ["evaluate_plan"]
    plan = calls[0][1]["plan"]
    assert {k: plan[k] for k in ("tp", "pp", "zero", "micro_batch")} == {"tp": 2, "pp": 2, "zero": 1, "micro_batch": 2}


def test_that_plan_on_other_hardware(make_service):
    [(calls, _)] = ask(make_service(), "qwen2.5-32b on 16 h200s, 4k: what plan do you get, and does that plan "
                                       "even fit on 16 a100 40gb?")
    assert names(calls) == ["recommend_plans", "estimate_memory"]
    memory = calls[1][1]
    assert memory["scenario"]["gpu"] == "a100-40gb" and memory["scenario"]["gpus"] == 16
    assert is_plan(memory["plan"], calls[0][2]["best"]["strategy"])


# ---- "A vs B" on the scenario: two setups side by side ---------------------------------------------------

@pytest.mark.parametrize("message, fact, values", [
    ("For Qwen2.5-32B on 64 GPUs: A100 80GB or H100, which trains faster?", "gpu", ["a100-80gb", "h100-sxm"]),
    ("Llama 3.1 8B on H100s: 16 versus 32 GPUs?", "gpus", [16, 32]),
    ("Gemma 2 27B on 8 A100s: LoRA or QLoRA?", "mode", ["lora", "qlora"]),
    ("H100, H200 or B200 for Llama 3.1 70B on 64 GPUs?", "gpu", ["h100-sxm", "h200", "b200"]),
])
def test_two_scenarios_side_by_side(make_service, message, fact, values):
    [(calls, answer)] = ask(make_service(), message)
    assert names(calls) == ["recommend_plans"] * len(values)
    assert [c[1]["scenario"][fact] for c in calls] == values
    assert "Side by side" in answer and "[R1]" in answer and "[R2]" in answer


def test_scenario_sides_are_not_plan_knobs():
    assert scenario_sides(normalise("tp4 vs tp8 for llama 70b on 64 h100")) is None
    assert scenario_sides(normalise("4k ctx / gbs 1024 / 32 nodes of 8xB200")) is None  # listed facts, not "or"
    assert scenario_sides(normalise("8 nodes or 16 nodes of h100")) == ({"nodes": 8}, {"nodes": 16})


# ---- one short question when two readings call different tools -----------------------------------------

@pytest.mark.parametrize("follow_up, readings", [
    ("what about 48?", ["48 GPUs", "global batch of 48 sequences"]),
    ("double it", ["twice the GPUs", "twice the global batch"]),
])
def test_a_genuinely_ambiguous_follow_up_is_asked_about(make_service, follow_up, readings):
    _, (calls, answer) = ask(make_service(), "llama 3 8b on 16 a100", follow_up)
    assert calls == []
    assert answer.count("?") == 1 and all(r in answer for r in readings)


# ---- what was understood, and a fine-tune's default batch ------------------------------------------------

def test_the_understood_line_separates_given_values_from_defaults(make_service):
    [(_, answer)] = ask(make_service(), "Llama 3.1 70B on 128 H100s, 8k context")
    line = answer.splitlines()[0]
    given, defaults = line.split("_defaults:_")
    assert line.startswith("_Understood:_") and "128 x" in given and "sequence 8,192 tokens" in given
    assert "global batch 1,024 sequences" in defaults and "bf16" in defaults  # the engine's TrainingSetup defaults


def test_a_lora_fine_tune_without_a_batch_gets_a_fine_tuning_batch_and_says_so(make_service):
    [(calls, answer)] = ask(make_service(), "LoRA fine-tune of Llama 3.1 8B on 2 A100s, 4k context - plan?")
    args, result = calls[0][1], calls[0][2]
    assert args["scenario"]["global_batch"] is None and args["scenario"]["global_batch_tokens"] is None
    # 128 sequences: tloen/alpaca-lora finetune.py `batch_size: int = 128`, Stanford Alpaca's batch size 128
    assert result["scenario"]["global_batch"] == 128 and result["scenario"]["global_batch_tokens"] == 128 * 4096
    defaults = answer.splitlines()[0].split("_defaults:_")[1]
    assert "global batch 128 sequences" in defaults and "alpaca-lora" in defaults


def test_full_training_keeps_the_pre_training_default():
    from shardwise.tools.scenario import Scenario

    resolved = Scenario(model="llama-3.1-8b", gpu="h100", gpus=8).resolve()
    assert resolved.setup.global_batch == 1024  # TrainingSetup's documented default, unchanged for full training


# ---- the pieces -------------------------------------------------------------------------------------------

def test_clauses_keep_a_short_follow_on_with_the_question_before_it():
    assert split_clauses(normalise("context parallel 2 or 4 — which is better, and why?")) == [
        "context parallel 2 or 4 - which is better, why?"]
    assert split_clauses(normalise("recommend a plan for llama 70b on 64 h100 and give me the deepspeed config")) == [
        "recommend a plan for llama 70b on 64 h100", "give me the deepspeed config"]


@pytest.mark.parametrize("text, plans", [
    ("context parallel 2 or 4", [{"cp": 2}, {"cp": 4}]),
    ("8-way tensor parallelism with pipeline parallel of 2", [{"tp": 8, "pp": 2}]),
    ("does tp4pp2 fit, zero1 mb1", [{"tp": 4, "pp": 2, "zero": 1, "micro_batch": 1}]),
    ("plain ddp w/o any zero", [{"tp": 1, "pp": 1, "zero": 0}]),
    ("same tp/ep, pp1, no interleaving", [{"pp": 1, "vpp": 1}]),
])
def test_degrees_written_in_words(text, plans):
    assert find_plans(text) == plans


def test_an_export_and_the_numbers_of_the_plan_on_the_table(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h200", "export that for megatron and tell me its MFU")
    assert names(calls) == ["export_config", "evaluate_plan"]
    best = first[0][2]["best"]["strategy"]
    assert is_plan(calls[0][1]["plan"], best) and is_plan(calls[1][1]["plan"], best)


def test_why_that_over_plain_fsdp_compares_with_pure_dp_zero3(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 8b on 16 h100, 8k", "why did you pick that over plain FSDP?")
    assert names(calls) == ["compare_plans"]
    args = calls[0][1]
    assert is_plan(args["plan_a"], first[0][2]["best"]["strategy"])
    assert {k: args["plan_b"][k] for k in ("tp", "pp", "zero")} == {"tp": 1, "pp": 1, "zero": 3}  # FSDP = ZeRO-3, no TP/PP
    assert args["scenario"]["framework"] is None  # the layout compared, not the user's framework


def test_a_what_if_and_does_the_plan_change_is_one_what_if(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 8b on 16 h100, 8k",
                        "what if we switch to 100GbE between nodes, and does the plan change?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["network"] == "eth-100g"


@pytest.mark.parametrize("follow_up, batch", [
    ("and what if we halved the batch?", 1024 // 2),  # the default 1,024 sequences, halved
    ("ok, double the gbs", 1024 * 2),
])
def test_a_scaled_batch_is_a_what_if_on_the_batch(make_service, follow_up, batch):
    _, (calls, _) = ask(make_service(), "Llama 3.1 70B on 128 H100", follow_up)
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["global_batch"] == batch


def test_a_plan_then_would_doubling_the_gpus_help(make_service):
    [(calls, _)] = ask(make_service(), "Llama 3.1 405B on 512 H100s, 8k ctx, 16M tokens per step. What plan? "
                                       "Also, would doubling the GPUs help?")
    assert names(calls) == ["recommend_plans", "what_if"] and calls[1][1]["change"]["gpus"] == 2 * 512


def test_apostrophes_are_not_quotation_marks(make_service):
    [(calls, _)] = ask(make_service(), "We're pretraining a 13B model on 256 A100s with 4k context and 4M tokens per "
                                       "step. What's the best layout, and how long would a step take with TP=4 PP=4 instead?")
    assert names(calls) == ["recommend_plans", "compare_plans"]
    scenario = calls[0][1]["scenario"]
    assert (scenario["params"], scenario["gpus"], scenario["seq_len"]) == ("13B", 256, 4 * 1024)
    assert (calls[1][1]["plan_b"]["tp"], calls[1][1]["plan_b"]["pp"]) == (4, 4)


def test_gpu_sides_with_their_own_counts(make_service):
    [(calls, _)] = ask(make_service(), "Is 8x A100 40GB or 4x H100 better for fine-tuning Llama 3 8B with LoRA?")
    assert [(c[1]["scenario"]["gpu"], c[1]["scenario"]["gpus"]) for c in calls] == [("a100-40gb", 8), ("h100-sxm", 4)]
    assert all(c[1]["scenario"]["mode"] == "lora" for c in calls)


def test_a_change_said_without_a_question_then_an_export(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k",
                                   "ok now with 128 gpus, and export the deepspeed config")
    # a DeepSpeed file for the what-if's Megatron-LM pick: re-ranked under DeepSpeed on 128 GPUs first (docs/agent.md,
    # "A file for another framework"), among the plans its JSON can express, and that plan exported
    assert names(calls) == ["what_if", "recommend_plans", "export_config"]
    assert calls[0][1]["change"]["gpus"] == 128 and calls[0][1]["scenario"]["framework"] is None
    ranked = calls[1][1]
    assert (ranked["scenario"]["gpus"], ranked["scenario"]["framework"], ranked["export_format"]) == (128, "deepspeed", "deepspeed")
    assert calls[2][1]["scenario"]["gpus"] == 128 and calls[2][1]["format"] == "deepspeed"
    assert is_plan(calls[2][1]["plan"], calls[1][2]["best"]["strategy"])


def test_an_act_on_your_plan_with_none_on_the_table_recommends_first(make_service):
    [(calls, _)] = ask(make_service(), "llama 3.1 405b on 1024 h100, 8k, 16M tok/step. explain why you chose that "
                                       "PP degree and what the bubble costs")
    assert names(calls) == ["recommend_plans", "explain_concept"]
    assert is_plan(calls[1][1]["plan"], calls[0][2]["best"]["strategy"])


def test_is_that_any_better_compares_with_the_plan_on_the_table(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "mixtral 8x7b on 64 h100, 4k, gbs 512",
                                   "how about ep 8 and tp 2, is that any better?")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_a"], first[0][2]["best"]["strategy"])
    assert (calls[0][1]["plan_b"]["ep"], calls[0][1]["plan_b"]["tp"]) == (8, 2)


def test_the_runner_up_is_a_plan_of_the_dialogue_state(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "hmm and the runner-up? why is it slower?")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_a"], first[0][2]["best"]["strategy"])
    assert is_plan(calls[0][1]["plan_b"], first[0][2]["alternatives"][0]["strategy"])


def test_same_thing_but_on_other_gpus_is_a_what_if(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "same thing but on 64 h200 — how much faster?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["gpu"] == "h200"


def test_what_would_you_change_about_our_plan(make_service):
    [(calls, _)] = ask(make_service(), "we use deepspeed zero-3 for qwen2.5 14b on 16 a100s, 4k, gbs 256 with mb 4. "
                                       "is that optimal? if not, what would you change?")
    assert names(calls) == ["evaluate_plan", "recommend_plans"]  # their plan's verdict, then the best plan
    assert (calls[0][1]["plan"]["zero"], calls[0][1]["plan"]["micro_batch"]) == (3, 4)
    assert calls[1][1]["constraints"] is None


@pytest.mark.parametrize("turns, tool, check", [
    (["qwen3 14b on 16 h100, 8k, gbs 256", "what's limiting it?"], "recommend_plans", lambda a: a["constraints"] is None),
    (["llama 3.1 8b on 8 a100", "could it run on 4 instead? how much slower?"], "what_if",
     lambda a: a["change"]["gpus"] == 4),
    (["llama 3 70b lora on 8 h100, 4k", "what if we used rank 64?"], "what_if", lambda a: a["change"]["lora_rank"] == 64),
])
def test_follow_ups_in_few_words(make_service, turns, tool, check):
    *_, (calls, _) = ask(make_service(), *turns)
    assert names(calls) == [tool] and check(calls[0][1])


def test_the_runner_ups_config(make_service):
    [(first, _), (calls, answer)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k",
                                        "give me the deepspeed config for the runner-up")
    # the runner-up of the ranking under DeepSpeed, the file's framework, set against the Megatron-LM runner-up
    assert names(calls) == ["recommend_plans", "export_config"]
    assert is_plan(calls[1][1]["plan"], calls[0][2]["alternatives"][0]["strategy"])
    assert "the Megatron-LM runner-up was `" in answer


def test_a_lookup_and_a_fit_question(make_service):
    [(calls, _)] = ask(make_service(), "how many params does qwen2.5 72b have, and will it fit on 8 h100 with lora?")
    assert names(calls) == ["lookup_model", "estimate_memory"]
    assert calls[1][1]["scenario"]["mode"] == "lora" and calls[1][1]["scenario"]["gpus"] == 8


def test_a_list_then_a_plan(make_service):
    [(calls, _)] = ask(make_service(), "which gpus do you know? and what would you pick for llama 3 8b on 8 a10g?")
    assert names(calls) == ["list_hardware", "recommend_plans"] and calls[1][1]["scenario"]["gpu"] == "a10g"


def test_compare_two_values_joined_by_and_then_memory_is_the_comparison(make_service):
    [(calls, _)] = ask(make_service(), "llama 3.1 8b on 32 h100, 8k, gbs 512: compare zero 1 and zero 3, then tell me "
                                       "which uses less memory per gpu")
    assert names(calls) == ["recommend_plans", "recommend_plans", "compare_plans"]
    assert (calls[2][1]["plan_a"]["zero"], calls[2][1]["plan_b"]["zero"]) == (1, 3)


def test_your_original_pick_after_another_plan_was_tried(make_service):
    [(first, _), (tried, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "try tp 4 pp 2",
                                               "now compare that with your original pick")
    assert names(tried) == ["evaluate_plan"] and names(calls) == ["compare_plans"]
    assert (calls[0][1]["plan_a"]["tp"], calls[0][1]["plan_a"]["pp"]) == (4, 2)  # "that": the plan just tried
    assert is_plan(calls[0][1]["plan_b"], first[0][2]["best"]["strategy"])  # "your original pick": the recommendation


def test_the_runner_up_in_three_words(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "and the runner-up?")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_b"], first[0][2]["alternatives"][0]["strategy"])


def test_memory_or_compute_bound_is_what_limits_the_plan(make_service):
    _, (calls, answer) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "is it memory bound or compute bound?")
    assert names(calls) == ["recommend_plans"] and "limits" in answer.lower()


def test_requests_listed_as_nouns(make_service):
    [(calls, _)] = ask(make_service(), "Qwen2.5-72B full fine-tune on 64 H100s, 8k ctx, 2M tokens/step: best plan, its "
                                       "memory breakdown, and the megatron-bridge config please")
    assert names(calls) == ["recommend_plans", "estimate_memory", "export_config"]
    best = calls[0][2]["best"]["strategy"]
    assert is_plan(calls[1][1]["plan"], best) and is_plan(calls[2][1]["plan"], best)
    assert calls[2][1]["format"] == "megatron-bridge"


def test_two_files_for_the_plan_on_the_table(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "give me the torchtitan config, and also the deepspeed one")
    # each file for the plan ranked under its own framework (docs/agent.md, "A file for another framework")
    assert [(n, a.get("format"), a["scenario"]["framework"]) for n, a, _ in calls] == [
        ("recommend_plans", None, "fsdp"), ("export_config", "torchtitan", "fsdp"),
        ("recommend_plans", None, "deepspeed"), ("export_config", "deepspeed", "deepspeed")]
    assert is_plan(calls[1][1]["plan"], calls[0][2]["best"]["strategy"])
    assert is_plan(calls[3][1]["plan"], calls[2][2]["best"]["strategy"])


def test_a_stated_setup_then_how_to_shard_it_is_one_recommendation(make_service):
    [(calls, _)] = ask(make_service(), "I have 4 nodes with 8 H200 each and want to train Llama 3.1 70B at 16k context. "
                                       "How should I shard it, and would fp8 help?")
    assert names(calls) == ["recommend_plans", "what_if"]
    assert calls[0][1]["scenario"]["gpus"] == 4 * 8 and calls[1][1]["change"]["precision"] == "fp8"


def test_memory_written_before_the_gpu_name(make_service):
    _, (calls, _) = ask(make_service(), "gemma 2 9b, 8 a100, 4k", "ok what if we only had 40gb a100s?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["gpu"] == "a100-40gb"


def test_the_part_shardwise_answers_is_answered_and_the_rest_set_aside(make_service):
    [(calls, answer)] = ask(make_service(), "what's a good learning rate for llama 3 8b, and what plan for 8 h100?")
    assert names(calls) == ["recommend_plans"] and "outside what shardwise does" in answer
    [(calls, _)] = ask(make_service(), "what learning rate for llama 70b on 64 h100?")
    assert calls == []  # nothing in it shardwise answers


def test_a_mode_on_each_side_of_a_contrast(make_service):
    [(calls, _)] = ask(make_service(), "llama 3.1 8b full finetune on 4 l40s vs lora on 4 l40s?")
    assert [c[1]["scenario"]["mode"] for c in calls] == ["full", "lora"]


def test_would_one_knob_fit_is_the_plan_on_the_table_with_it(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 8b on 8 h100, 8k ctx", "would mb 4 fit? and would it be faster?")
    assert names(calls) == ["compare_plans"]
    best = dict(first[0][2]["best"]["strategy"], micro_batch=4)
    assert is_plan(calls[0][1]["plan_a"], first[0][2]["best"]["strategy"]) and is_plan(calls[0][1]["plan_b"], best)


def test_the_closest_plan_that_fits_after_checking_ours(make_service):
    [(calls, _)] = ask(make_service(), "llama 3 70b, 32 a100 80gb, 4k, gbs 512, tp8 pp4 zero1 mb1 -- does it fit? if so "
                                       "how fast; if not, what's the closest that fits?")
    assert names(calls) == ["evaluate_plan", "recommend_plans"] and calls[1][1]["constraints"] is None


def test_a_size_said_as_active_parameters_is_not_the_model(make_service):
    _, (calls, _) = ask(make_service(), "qwen3 30b a3b on 16 h100", "why is the memory so high if only 3b are active?")
    assert names(calls) == ["lookup_model", "estimate_memory"]
    assert calls[1][1]["scenario"]["model"] == "qwen3-30b-a3b"


def test_a_plan_and_please_explain_its_choice(make_service):
    [(calls, _)] = ask(make_service(), "need a plan for llama-3.1-70b, 256 h100, 8k ctx, 8M tok batch, and pls explain "
                                       "the CP choice")
    assert names(calls) == ["recommend_plans", "explain_concept"] and calls[1][1]["concept"] == "context_parallel"
    assert is_plan(calls[1][1]["plan"], calls[0][2]["best"]["strategy"])


def test_drop_to_fewer_gpus_is_a_what_if(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 405b on 512 h100 8k", "drop to 256 gpus — does anything still fit?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["gpus"] == 256


def test_a_recipe_plan_named_and_is_the_winner_really_faster(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k",
                                   "the nemo recipe uses tp4 pp4 cp2 — is the winner really faster?")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_a"], first[0][2]["best"]["strategy"])
    assert {k: calls[0][1]["plan_b"][k] for k in ("tp", "pp", "cp")} == {"tp": 4, "pp": 4, "cp": 2}


def test_the_recipes_layout_without_degrees_is_asked_about(make_service):
    _, (calls, answer) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "why not the recipe's layout?")
    assert calls == [] and "TP=" in answer and answer.count("?") == 1


def test_one_knob_under_a_changed_mode_keeps_the_plan_on_the_table(make_service):
    [(calls, _)] = ask(make_service(), "llama 3.1 70b lora r=64 on 8 a100, 4k. plan? also: would qlora let us use mb 4?")
    assert names(calls) == ["recommend_plans", "evaluate_plan"]
    assert calls[1][1]["scenario"]["mode"] == "qlora"
    assert is_plan(calls[1][1]["plan"], dict(calls[0][2]["best"]["strategy"], micro_batch=4))


def test_what_is_a_knob_and_does_your_plan_use_it(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k",
                                   "dumb question but what is zero-3 and does your plan use it?")
    assert names(calls) == ["explain_concept"] and calls[0][1]["concept"] == "zero"
    assert is_plan(calls[0][1]["plan"], dict(first[0][2]["best"]["strategy"], zero_stage=3))


def test_a_metric_of_the_plan_on_the_table(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "what's the throughput per gpu? and the MFU?")
    assert names(calls) == ["evaluate_plan"] and is_plan(calls[0][1]["plan"], first[0][2]["best"]["strategy"])


def test_a_change_written_with_an_arrow(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "if we went to 8k->16k, would the plan still be best?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["seq_len"] == 16 * 1024


def test_their_plan_checked_then_compared_with_the_pick(make_service):
    [(calls, _)] = ask(make_service(), "Mixtral 8x22B, 64 H200, 4k, 4M tokens/step. We're considering EP=8 TP=2 PP=4. "
                                       "Fits? Faster than what you'd pick?")
    assert names(calls) == ["estimate_memory", "recommend_plans", "compare_plans"]
    theirs = {"tp": 2, "pp": 4, "ep": 8}
    assert {k: calls[2][1]["plan_b"][k] for k in theirs} == theirs
    assert is_plan(calls[2][1]["plan_a"], calls[1][2]["best"]["strategy"])


def test_evaluate_it_under_a_change_keeps_the_plan(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "evaluate it at 16k instead")
    assert names(calls) == ["evaluate_plan"] and calls[0][1]["scenario"]["seq_len"] == 16 * 1024
    assert is_plan(calls[0][1]["plan"], first[0][2]["best"]["strategy"])


def test_two_formats_in_one_request(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 70b on 64 h100 8k", "give me both: megatron and deepspeed configs")
    # the Megatron-LM file for the plan on the table; the DeepSpeed one for the plan ranked under DeepSpeed
    assert [(n, a.get("format"), a["scenario"]["framework"]) for n, a, _ in calls] == [
        ("export_config", "megatron", None), ("recommend_plans", None, "deepspeed"), ("export_config", "deepspeed", "deepspeed")]


def test_n_times_more_nodes_scales_the_count(make_service):
    _, (calls, _) = ask(make_service(), "llama 3.1 70b on 64 h100 8k",
                        "how much would 2x more nodes speed it up, and would the plan change?")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["gpus"] == 2 * 64


def test_the_step_time_of_that_plan(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "llama 3.1 70b, 64 h100, 8k",
                                   "so what's the step time of that plan, and the tokens/s?")
    assert names(calls) == ["evaluate_plan"] and is_plan(calls[0][1]["plan"], first[0][2]["best"]["strategy"])


# ---- classes of message found by fresh set 6 (phrasings of our own) ------------------------------------------

def test_a_lora_word_that_is_the_setups_mode_plans_it(make_service):
    # "lora" names how to train a complete setup, and the question is how to lay it out: a recommendation
    [(calls, _)] = ask(make_service(), "planning to lora-tune qwen2.5 32b across 4x h100, 8k sequences; "
                                       "what parallelism and about how much memory per card")
    assert names(calls)[0] == "recommend_plans" and "explain_concept" not in names(calls)
    scenario = calls[0][1]["scenario"]
    assert scenario["mode"] == "lora" and scenario["gpus"] == 4 and scenario["seq_len"] == 8 * 1024
    assert names(calls) == ["recommend_plans", "estimate_memory"]  # "… and about how much memory": its breakdown
    assert is_plan(calls[1][1]["plan"], calls[0][2]["best"]["strategy"])


def test_a_concept_question_beside_a_setup_explains_then_plans(make_service):
    # "what settings" with no file format named asks for the plan, not an export
    [(calls, answer)] = ask(make_service(), "how does qlora differ from plain lora in memory? we have 4x l40s and "
                                            "want to qlora llama 3 8b at 4k -- what settings should we use")
    assert names(calls)[0] == "explain_concept" and calls[0][1]["concept"] in ("qlora", "lora")
    assert "recommend_plans" in names(calls) and "export_config" not in names(calls)
    assert calls[names(calls).index("recommend_plans")][1]["scenario"]["mode"] == "qlora"


def test_a_concept_question_with_no_setup_is_explained(make_service):
    [(calls, _)] = ask(make_service(), "does activation checkpointing cost much speed, or mostly just save memory?")
    assert names(calls) == ["explain_concept"] and calls[0][1]["concept"] == "activation_recompute"
    assert calls[0][1]["scenario"] is None


def test_a_metric_of_a_named_plan_beside_its_concept_is_evaluated_too(make_service):
    [(calls, _)] = ask(make_service(), "qwen3 30b a3b on 16 h100, ep8 tp1 pp2 zero1 mb1, 4k ctx, gbs 256. what throughput "
                                       "would that give us, and how is mfu defined when only some experts are active?")
    assert names(calls) == ["evaluate_plan", "explain_concept"]
    assert {k: calls[0][1]["plan"][k] for k in ("ep", "pp", "zero")} == {"ep": 8, "pp": 2, "zero": 1}
    assert calls[1][1]["concept"] == "mfu"


def test_two_models_on_the_same_cluster_get_a_plan_each(make_service):
    [(calls, answer)] = ask(make_service(), "32 a100s, 4k context, gbs 512 -- qwen2.5 14b or mistral 7b, "
                                            "best layout for each and which one gets more tokens/s?")
    assert names(calls) == ["recommend_plans", "recommend_plans"]
    assert [c[1]["scenario"]["model"] for c in calls] == ["qwen2.5-14b", "mistral-7b"]
    assert all(c[1]["scenario"]["gpus"] == 32 and c[1]["scenario"]["seq_len"] == 4 * 1024 for c in calls)


def test_ours_against_yours_compares_the_pick_with_their_plan(make_service):
    _, (rec, rec_answer), (calls, answer) = ask(make_service(), "my llama 3.1 70b job: 64 h100, tp8 pp2 zero1 mb1, 8k, gbs 256. fits?",
                                                "what would you use instead?", "is mine much slower than yours, and why?")
    assert names(rec) == ["recommend_plans"] and names(calls) == ["compare_plans"]
    assert "outside what shardwise does" not in rec_answer + answer  # nothing was set aside: no topic outside the domain
    assert is_plan(calls[0][1]["plan_a"], rec[0][2]["best"]["strategy"])  # yours: the pick
    assert {k: calls[0][1]["plan_b"][k] for k in ("tp", "pp", "zero")} == {"tp": 8, "pp": 2, "zero": 1}  # mine


def test_a_lora_rank_change_said_as_news(make_service):
    _, (calls, _) = ask(make_service(), "lora on llama 3.1 8b, 8 h100s, 4k", "what if we raise the lora rank from 16 to 64")
    assert names(calls) == ["what_if"] and calls[0][1]["change"]["lora_rank"] == 64


def test_an_exports_notes_say_code_settings_in_words(make_service):
    _, (calls, answer) = ask(make_service(), "qwen2.5 7b on 16 h100, 4k, gbs 256", "the accelerate yaml please")
    assert names(calls) == ["export_config"] and calls[0][1]["format"] == "accelerate"
    notes = calls[0][2]["warnings"]
    assert any("gradient_accumulation_steps=" in n for n in notes)  # the file's NOTE comments keep the code …
    assert "gradient_accumulation_steps=" not in answer and "gradient_accumulation_steps set to" in answer  # … the answer says it


def test_two_models_joined_by_and_in_a_comparison(make_service):
    [(calls, _)] = ask(make_service(), "compare phi 4 and qwen2.5 14b for full training on 16 a100 80gb at 4k -- which is quicker?")
    assert names(calls) == ["recommend_plans", "recommend_plans"]
    assert {c[1]["scenario"]["model"] for c in calls} == {"phi-4", "qwen2.5-14b"}
    assert all(c[1]["scenario"]["gpu"] == "a100-80gb" and c[1]["scenario"]["gpus"] == 16 for c in calls)


def test_a_knob_asked_about_with_no_setup_is_its_concept(make_service):
    [(calls, _)] = ask(make_service(), "how much memory does zero-2 really save?")
    assert names(calls) == ["explain_concept"] and calls[0][1]["concept"] == "zero"


def test_the_gap_between_yours_and_ours(make_service):
    _, (rec, _), (calls, _) = ask(make_service(), "we're on tp2 pp4 zero1 mb1 for llama 3.1 70b, 32 h100, 4k, gbs 128",
                                  "best plan?", "what's the difference between our layout and yours in step time?")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_a"], rec[0][2]["best"]["strategy"])
    assert {k: calls[0][1]["plan_b"][k] for k in ("tp", "pp")} == {"tp": 2, "pp": 4}


def test_a_stage_contrast_that_names_the_knob_once(make_service):
    [(calls, _)] = ask(make_service(), "llama 3 8b, 16 a100 80gb, 4k, gbs 128, pure dp mb 1: zero-1 or stage 3, which wins?")
    assert names(calls) == ["compare_plans"]
    assert (calls[0][1]["plan_a"]["zero"], calls[0][1]["plan_b"]["zero"]) == (1, 3)


def test_why_no_knob_with_the_degree_they_would_use(make_service):
    [(first, _), (calls, _)] = ask(make_service(), "qwen2.5 14b on 16 h100, 4k, gbs 256",
                                   "why no pipeline parallel at all? we'd have gone pp=2, everything else the same")
    assert names(calls) == ["compare_plans"]
    assert is_plan(calls[0][1]["plan_a"], first[0][2]["best"]["strategy"]) and calls[0][1]["plan_b"]["pp"] == 2


def test_an_imperative_concept_request_then_a_plan(make_service):
    [(calls, _)] = ask(make_service(), "eli5 context parallelism. also llama 3.1 8b on 16 h100 at 64k -- what plan?")
    assert names(calls) == ["explain_concept", "recommend_plans"]
    assert calls[0][1]["concept"] == "context_parallel" and calls[1][1]["scenario"]["seq_len"] == 64 * 1024


def test_lora_rank_in_a_qlora_setup_changes_the_rank_not_the_mode(make_service):
    _, (calls, _) = ask(make_service(), "qlora mistral 7b on 2 l40s, 2k", "and with a lora rank of 64?")
    assert names(calls) == ["what_if"]
    assert calls[0][1]["change"]["lora_rank"] == 64 and calls[0][1]["change"]["mode"] is None  # still QLoRA
    assert calls[0][1]["scenario"]["mode"] == "qlora"


def test_an_unread_batch_in_a_lora_message_names_the_fine_tunes_default():
    # The "defaults used" note said "1,024 sequences" for a LoRA scenario though its tools ran with 128 (the
    # fine-tune default, engine/training.py: alpaca-lora's batch_size 128); now it names the batch the tools used.
    from shardwise.agent.planner.defaults import unread_defaults
    from shardwise.tools.scenario import Scenario

    lora = unread_defaults("what batch should a lora fine-tune use?", Scenario(model="llama-3.1-8b", mode="lora"))
    full = unread_defaults("what batch should we use?", Scenario(model="llama-3.1-8b"))
    assert ("global batch", "128 sequences") in lora and ("global batch", "1,024 sequences") in full
