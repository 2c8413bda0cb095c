"""GRPO/PPO on the page: "Prompt tokens" and "Samples per prompt" join "Response tokens" (the CLI's --prompt-len,
--group-size); the page planned every rollout at verl's 512-token prompt and 5 samples per prompt."""

from __future__ import annotations

from shardwise.web.pages import DEFAULT_FORM, compute_results, form_to_request

GRPO = {**DEFAULT_FORM, "model": "qwen2.5-7b", "gpus": "16", "mode": "grpo", "batch": "256", "batch_unit": "sequences"}


def test_prompt_and_group_size_reach_the_search():
    """Hand check: a 1k prompt + 3k response = 1,024 + 3,072 = 4,096-token sequences; 256 of them = 1,048,576
    tokens; 16 samples per prompt as given (verl's default would be 5)."""
    view = compute_results({**GRPO, "prompt_len": "1k", "response_len": "3k", "group_size": "16"})["view"]
    assert view.setup.startswith("sequence 4,096 tokens · global batch 256 sequences (1,048,576 tokens) · GRPO ·")
    assert "prompt 1,024 + response 3,072 tokens, 16 samples per prompt" in view.post_training
    assert "Not given, verl's defaults used: inference tp." in view.post_training


def test_a_prompt_alone_makes_the_sequence_with_the_default_response():
    req = form_to_request({**GRPO, "prompt_len": "1k"})  # verl's default response, 512
    assert (req.prompt_len, req.response_len, req.seq_len) == (1024, None, None)


def test_outside_grpo_the_rollout_fields_are_not_sent():
    req = form_to_request({**DEFAULT_FORM, "prompt_len": "1k", "group_size": "16"})  # full training
    assert req.prompt_len is None and req.group_size is None and req.seq_len == 8192


def test_a_bad_group_size_is_a_message():
    r = compute_results({**GRPO, "group_size": "many"})
    assert r["view"] is None and r["error"] == "samples per prompt must be a whole number, got 'many'"
