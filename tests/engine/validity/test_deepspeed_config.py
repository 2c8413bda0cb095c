"""`--framework deepspeed` ranks only layouts DeepSpeed's JSON config can express (the ones
engine/export/deepspeed.py writes). Expectations come from the rule's definition, read in the
installed DeepSpeed 0.19 (engine/validity/deepspeed_config.py), never from running the code."""

from __future__ import annotations

import pytest

from shardwise.engine.export import ExportRefused, export_plan
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

from shardwise.engine import validity
from shardwise.engine.model_spec import ModelSpec, MoESpec

# Llama-3-70B-shaped (64 heads, 8 KV heads) and Mixtral-8x7B-shaped (8 experts), as in test_rules.py.
DENSE = ModelSpec(name="dense", num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                  ffn_hidden_size=28672, vocab_size=128256)
MOE = ModelSpec(name="moe", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                ffn_hidden_size=14336, vocab_size=32000,
                moe=MoESpec(num_experts=8, top_k=2, expert_ffn_hidden_size=14336))
CLUSTER64 = build_cluster("h100-sxm", 64)


def check(model=DENSE, seq=4096, framework="deepspeed", **plan):
    setup = TrainingSetup(seq_len=seq, global_batch=1024, framework=framework)
    errors, warnings = validity.violations(model, CLUSTER64, setup, Strategy(**plan))
    return {v.rule: v.message for v in errors}, {v.rule: v.message for v in warnings}


LAYOUT, OPTIONS = "deepspeed_config_layout", "deepspeed_config_options"


@pytest.mark.parametrize("plan", [
    dict(tp=8, pp=2),  # 64 = 8·2·4: AutoTP inside PipelineModule
    dict(tp=2, cp=4, seq=8192),  # 64 = 2·4·8: Ulysses is SP x DP only
    dict(pp=2, cp=2, seq=8192),  # Ulysses inside PipelineModule
])
def test_layouts_ds_config_cannot_write_are_errors(plan):
    errors, _ = check(framework="deepspeed", zero_stage=1, **plan)
    assert LAYOUT in errors


def test_pipeline_with_expert_parallelism_and_expert_tp_are_errors():
    assert LAYOUT in check(model=MOE, framework="deepspeed", zero_stage=1, pp=2, ep=8)[0]
    assert LAYOUT in check(model=MOE, framework="deepspeed", zero_stage=1, tp=2, ep=4, etp=2)[0]


def test_ep_with_ulysses_under_zero3_and_hsdp_are_errors():
    assert OPTIONS in check(model=MOE, framework="deepspeed", zero_stage=3, ep=8, cp=2, seq=8192)[0]
    assert OPTIONS not in check(model=MOE, framework="deepspeed", zero_stage=2, ep=8, cp=2, seq=8192)[0]
    assert OPTIONS in check(framework="deepspeed", zero_stage=3, hsdp_replicas=2)[0]


@pytest.mark.parametrize("plan", [dict(tp=8, sequence_parallel=False), dict(pp=4), dict(cp=8, seq=8192),
                                  dict(tp=8, seq=8192, sequence_parallel=False)])
def test_what_ds_config_writes_is_allowed(plan):
    errors, _ = check(framework="deepspeed", zero_stage=1, **plan)
    assert LAYOUT not in errors and OPTIONS not in errors


def test_other_frameworks_are_untouched():
    # Megatron(-DeepSpeed) runs TP with PP and CP; torchtitan runs HSDP.
    assert LAYOUT not in check(framework="megatron", tp=8, pp=2)[0]
    assert LAYOUT not in check(framework="fsdp", zero_stage=3, tp=2, cp=4, seq=8192)[0]
    assert OPTIONS not in check(framework="fsdp", zero_stage=3, hsdp_replicas=2)[0]


def test_recommend_for_deepspeed_ranks_only_plans_its_exporter_writes():
    # Before session 11 the best plan here was TP=2 CP=16 (Ulysses with AutoTP), which export refused.
    model, cluster = get_model("llama-3-70b"), build_cluster("h100-sxm", 64)
    setup = TrainingSetup(seq_len=16384, global_batch=256, framework="deepspeed")
    rec = recommend(model, cluster, setup, top_k=8)
    assert rec.plans
    for p in rec.plans:
        s = p.strategy
        try:
            export_plan("deepspeed", model, cluster, setup, Strategy(
                tp=s.tp, pp=s.pp, vpp=s.vpp, cp=s.cp, ep=s.ep, etp=s.etp, zero_stage=s.zero_stage,
                hsdp_replicas=s.hsdp_replicas, sequence_parallel=s.sequence_parallel,
                micro_batch=s.micro_batch, recompute=s.recompute))
        except ExportRefused as refused:  # pragma: no cover - the failure message is the point
            pytest.fail(f"recommend ranked {s} for deepspeed but export refuses it: {refused}")


# --- one set of limits for the search and the exporter (session 12) ------------------------------------

LIMIT_PLANS = [  # (limit, plan, setup) — each breaks exactly the named limit, read off its definition
    ("fp8", dict(zero_stage=1), dict(precision="fp8")),
    ("pp_with_tp_ep_cp", dict(tp=8, pp=2, zero_stage=1, sequence_parallel=False), {}),
    ("tp_with_ulysses_cp", dict(tp=2, cp=4, zero_stage=1, sequence_parallel=False), dict(seq_len=8192)),
    ("hsdp", dict(zero_stage=3, hsdp_replicas=2), {}),
    # AutoTP has no Megatron sequence parallelism (Strategy's default is SP on whenever TP > 1)
    ("megatron_sequence_parallel", dict(tp=8, zero_stage=1), {}),
]


def test_megatron_sequence_parallel_is_not_ranked_under_deepspeed():
    # ux12 (session 12): 70B on 64 H100 at 8K, 4M-token batches ranked TP=8 with Megatron SP under --framework
    # deepspeed. AutoTP shards the linear layers only, so a TP plan under DeepSpeed is priced with SP off.
    model, cluster = get_model("llama-3-70b"), build_cluster("h100-sxm", 64)
    setup = TrainingSetup(seq_len=8192, global_batch=512, framework="deepspeed")
    rec = recommend(model, cluster, setup, top_k=8)
    assert rec.plans and not any(p.strategy.sequence_parallel and p.strategy.tp > 1 for p in rec.plans)
    assert OPTIONS in check(framework="deepspeed", zero_stage=1, tp=8)[0]
    assert OPTIONS not in check(framework="deepspeed", zero_stage=1, tp=8, sequence_parallel=False)[0]
    assert OPTIONS not in check(framework="megatron", zero_stage=1, tp=8)[0]


@pytest.mark.parametrize("name,plan,setup", LIMIT_PLANS)
def test_the_search_and_the_exporter_refuse_by_the_same_limit_in_the_same_words(name, plan, setup):
    from shardwise.engine.validity.deepspeed_config import LIMITS_BY_NAME

    ds_setup = TrainingSetup(**{"seq_len": 4096, "global_batch": 1024, "framework": "deepspeed", **setup})
    strategy = Strategy(**plan)
    errors, _ = validity.violations(DENSE, CLUSTER64, ds_setup, strategy)
    limit = LIMITS_BY_NAME[name]
    reason = limit.reason(strategy)
    [searched] = [v for v in errors if v.rule.startswith("deepspeed_config_")]
    assert searched.message.startswith(reason)
    with pytest.raises(ExportRefused) as refused:
        export_plan("deepspeed", DENSE, CLUSTER64, ds_setup, strategy)
    assert refused.value.rule == name and refused.value.reason == reason
    assert refused.value.hint and refused.value.hint in searched.message


def test_a_plan_made_for_megatron_is_refused_by_the_limit_not_by_the_rule_that_groups_it():
    # TP=8 with PP=2 is a valid Megatron plan; DeepSpeed's pipeline engine has no AutoTP.
    setup = TrainingSetup(seq_len=4096, global_batch=1024, framework="megatron")
    with pytest.raises(ExportRefused) as refused:
        export_plan("deepspeed", DENSE, CLUSTER64, setup, Strategy(tp=8, pp=2, zero_stage=1))
    assert refused.value.rule == "pp_with_tp_ep_cp" and "(TP=8)" in refused.value.reason


def test_fp8_under_deepspeed_is_ruled_out_for_every_plan_with_one_reason():
    # DeepSpeed 0.19.8's config: precision sections bf16/fp16 only (runtime/precision_config.py), torch_autocast
    # dtype fp16/fp32/int8/bf16 (runtime/config.py DtypeEnum) — checked in the installed package below.
    from deepspeed.runtime import precision_config
    from deepspeed.runtime.config import DtypeEnum

    assert {e.name for e in DtypeEnum} == {"fp16", "fp32", "int8", "bf16"}
    assert not [name for name in dir(precision_config) if "fp8" in name.lower()]
    setup = TrainingSetup(seq_len=4096, global_batch=512, framework="deepspeed", precision="fp8")
    rec = recommend(get_model("llama-3-8b"), build_cluster("h100-sxm", 64), setup, top_k=3)
    assert rec.plans == []
    assert set(rec.excluded) == {"deepspeed_config_setup"}
