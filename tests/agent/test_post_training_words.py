"""Post-training in plain words (issue 15): the algorithm, LoRA beside it, and rollout lengths that
must not be read as the sequence length."""

from __future__ import annotations

from shardwise.agent.planner.entities import extract


def test_grpo_with_response_length_from_the_issue():
    e = extract("can we GRPO Qwen2.5-7B on 8 H100s with 1k-token responses?")
    assert (e.mode, e.response_len, e.seq_len, e.gpus) == ("grpo", 1024, None, 8)
    s = e.scenario_patch().resolve().setup
    assert s.post_training.response_len == 1024 and s.seq_len == 512 + 1024


def test_dpo_with_lora_and_context():
    e = extract("DPO with LoRA r=32 on llama 3.1 8b, 8 H100, 4k context")
    assert (e.mode, e.lora_rank, e.seq_len) == ("dpo-lora", 32, 4096)


def test_ppo_rollout_shape_words():
    e = extract("RLHF with PPO on llama-3.1-8b, 16 H100s, 512-token prompts, 8 samples per prompt, "
                "responses up to 2k tokens")
    assert (e.mode, e.prompt_len, e.response_len, e.group_size) == ("ppo", 512, 2048, 8)


def test_plain_training_is_untouched():
    e = extract("llama 3.1 70b on 64 H100s, 8k context, 4M token batches")
    assert (e.mode, e.response_len, e.seq_len) == (None, None, 8192)


def test_response_lengths_without_the_word_token_and_group_sizes_stay_apart():
    assert extract("and with 4k responses?").response_len == 4096
    e = extract("GRPO on llama 3.1 8b, 8 H100s, 16 responses per prompt, 2048 completions tokens max")
    assert e.group_size == 16 and e.response_len != 16


def test_verl_and_trl_settings_are_export_requests():
    from shardwise.agent.planner.intents import classify
    from shardwise.agent.state import ConversationState

    assert extract("give me the verl settings").export_format == "fsdp"
    assert extract("the TRL config please").export_format == "accelerate"
    assert classify("give me the verl settings", extract("give me the verl settings"), ConversationState()).family == "export"


def test_a_follow_up_on_the_response_length_keeps_the_sequences_per_step():
    from shardwise.tools.scenario import Scenario
    from shardwise.tools.what_if import WhatIfArgs, what_if

    base = Scenario(model="qwen2.5-7b", gpu="h100", gpus=8, mode="grpo", response_len=1024, global_batch=640)
    w = what_if(WhatIfArgs(scenario=base, change=Scenario(response_len=4096)))
    after = w.after_result.plan_evaluation()
    sequences = after.strategy.dp * after.strategy.micro_batch * after.strategy.grad_accum
    assert after.post_training.response_len == 4096
    assert sequences == 640  # the engine ran the scenario's 640 sequences, not a token-matched batch
    assert w.after.seq_len == 512 + 4096


def test_memory_answer_names_the_post_training_parts_and_the_peak_phase():
    from shardwise.tools.evaluate_plan import EstimateMemoryArgs, estimate_memory
    from shardwise.tools.scenario import Plan, Scenario

    scenario = Scenario(model="llama-3.1-8b", gpu="h100", gpus=8, mode="grpo", response_len=2048, global_batch=640)
    m = estimate_memory(EstimateMemoryArgs(scenario=scenario, plan=Plan(tp=1, zero=3, micro_batch=2)))
    names = {t.name for t in m.post_training_terms}
    assert {"reference model weights", "rollout engine weights", "rollout KV cache"} <= names
    assert m.peak_phase in ("the policy's training step", "rollout generation", "the reference forward")


def test_post_training_concept_explained_with_the_users_numbers():
    from shardwise.tools.explain import ExplainArgs, explain_concept
    from shardwise.tools.scenario import Scenario

    assert extract("what is GRPO?").concept == "post_training"
    scenario = Scenario(model="llama-3.1-8b", gpu="h100", gpus=8, mode="dpo", global_batch=256)
    x = explain_concept(ExplainArgs(concept="post_training", scenario=scenario))
    assert x.numbers["algorithm"] == "DPO" and x.numbers["reference_weights_gib"] > 0
    assert x.numbers["step_s"] > x.numbers["full_step_s"]
    assert "frozen reference holds" in x.text
