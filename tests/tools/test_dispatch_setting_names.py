"""The chat's tools hear the engine's refusals with setting names, the names of their own arguments.

tools/dispatch.py returns an engine refusal as data (`errors`): its text names settings as the tool's
arguments do (gpus_per_node, prompt_len), not as the CLI's flags. An export the target refuses comes back
as a result whose reason and hint name settings the same way. Expected text is written by hand from the
engine's templates (files named).
"""

from __future__ import annotations

import json

from shardwise.tools import dispatch

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}


def test_a_cluster_refusal_reaches_the_tool_with_its_argument_names():  # engine/inputs.py build_cluster
    out = dispatch("evaluate_plan", json.dumps({"scenario": {**SCENARIO, "gpus_per_node": 16}, "plan": {"tp": 1}}))
    assert not out.ok and out.errors == [
        "gpus_per_node 16 is larger than the cluster (gpus 8): give at most 8 GPUs per node, or more GPUs"]
    assert "--" not in out.content()


def test_a_rollout_refusal_reaches_the_tool_with_its_argument_names():  # engine/post_training/modes.py
    out = dispatch("evaluate_plan", {"scenario": {**SCENARIO, "prompt_len": 512}, "plan": {"tp": 1}})
    assert out.errors == ["prompt_len describe rollout generation and apply only to mode grpo or ppo (and their "
                          "-lora/-qlora variants), not full"]


def test_an_export_refusal_reaches_the_tool_with_its_argument_names():  # engine/export/megatron.py
    out = dispatch("export_config", {"scenario": {**SCENARIO, "mode": "lora"}, "format": "megatron",
                                     "plan": {"tp": 1}})
    assert out.ok and out.result.exported is False
    assert out.result.refused_reason == "Megatron-LM's pretrain_gpt.py has no LoRA adapters"
    assert out.result.hint == "export format megatron-bridge (peft=lora) or use mode full"
