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
