"""The explain entry on MoE token dispatchers reads which framework offers DeepEP from the engine's rule. Expected
values are what the installed frameworks offer, read in their packages (docs/search.md, "Fixed in session 11";
engine/validity/dispatchers.py): Megatron-Core 0.16 (flex dispatcher, deepep backend), DeepSpeed 0.19.8 AutoEP
(`expert_parallel.comm_backend`) and torchtitan 0.2.2 (`expert_parallel_comm_backend`) offer it; nanotron has no
expert parallelism (its ParallelContext asserts TP·CP·DP·PP = world size)."""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.tools.dispatch import dispatch
from shardwise.tools.scenario import Plan, Scenario


def explain(scenario=None, plan=None):
    out = dispatch("explain_concept", {"concept": "moe_dispatcher", "scenario": scenario, "plan": plan}, result_id="R1")
    assert out.ok, out.error
    return out.result


def test_which_frameworks_offer_deepep_without_a_scenario():
    r = explain()
    assert r.numbers["deepep_frameworks"].split(", ") == ["megatron", "deepspeed", "fsdp"]
    assert r.numbers["no_deepep_frameworks"] == "nanotron" and r.numbers["nanotron_expert_parallel"] == "no"
    assert "and not by nanotron" in r.text and "**nanotron** (`nanotron`): no DeepEP" in r.text
    assert "torchtitan (FSDP2)" in r.text and "DeepSpeed" in r.text and "Megatron" in r.text


def test_with_a_moe_scenario_each_offered_dispatcher_is_priced():
    scenario = Scenario(model="mixtral-8x7b", gpu="h100", gpus=32, seq_len=4096, global_batch=512, framework="deepspeed")
    plan = Plan(tp=1, pp=1, ep=8, zero=1, micro_batch=1)
    r = explain(scenario.model_dump(), plan.model_dump())
    s = scenario.resolve()
    for dispatcher in ("alltoall", "deepep"):  # DeepSpeed's two; it has no allgather dispatcher
        setup = s.setup.model_copy(update={"moe_dispatcher": dispatcher})
        step = evaluate(s.model, s.cluster, setup, plan.strategy()).time.step_s
        assert r.numbers[f"{dispatcher}_step_ms"] == pytest.approx(1e3 * step, abs=0.05)
    assert "allgather_step_ms" not in r.numbers and "With your numbers" in r.text
