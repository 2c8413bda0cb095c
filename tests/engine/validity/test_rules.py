"""Each validity rule on hand-chosen plans. Expectations come from the rule's definition
(arithmetic written beside each case), never from running the code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shardwise.engine import validity
from shardwise.engine.cluster import Cluster
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.model_spec import ModelSpec, MoESpec
from shardwise.engine.plans import PlanGrid
from shardwise.engine.strategy import RECOMPUTE_MODES, Strategy
from shardwise.engine.training import TrainingSetup

NVLINK = NetworkSpec(id="nvlink", name="NVLink", bandwidth_gbs=450, latency_us=2)
IB = NetworkSpec(id="ib", name="InfiniBand", bandwidth_gbs=50, latency_us=5)
H100 = GPUSpec(id="h100", name="H100", memory_gib=80, bf16_tflops=989, fp8_tflops=1979,
               hbm_bandwidth_gbs=3350, intra_node=NVLINK)
A100 = GPUSpec(id="a100", name="A100", memory_gib=80, bf16_tflops=312, fp8_tflops=None,
               hbm_bandwidth_gbs=2039, intra_node=NVLINK)

# Llama-3-70B-shaped: 64 heads, 8 KV heads, FFN 28672 = 2^12·7.
DENSE = ModelSpec(name="dense", num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                  ffn_hidden_size=28672, vocab_size=128256)
# 30 layers = 2·3·5 for uneven splits; FFN 8190 = 2·4095 (odd after one halving).
ODD = ModelSpec(name="odd", num_layers=30, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                ffn_hidden_size=8190, vocab_size=32000)
# Mixtral-8x7B-shaped: 8 experts, expert FFN 14336.
MOE = ModelSpec(name="moe", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                ffn_hidden_size=14336, vocab_size=32000,
                moe=MoESpec(num_experts=8, top_k=2, expert_ffn_hidden_size=14336))


def cluster(n: int, per_node: int = 8, gpu: GPUSpec = H100) -> Cluster:
    return Cluster(gpu=gpu, num_gpus=n, gpus_per_node=per_node, network=IB)


def check(model=DENSE, n=64, per_node=8, gpu=H100, seq=4096, gb=1024, framework="megatron", precision="bf16",
          dispatcher="alltoall", **plan):
    setup = TrainingSetup(seq_len=seq, global_batch=gb, framework=framework, precision=precision,
                          moe_dispatcher=dispatcher)
    errors, warnings = validity.violations(model, cluster(n, per_node, gpu), setup, Strategy(**plan))
    return {v.rule: v.message for v in errors}, {v.rule: v.message for v in warnings}


def test_a_sound_plan_has_no_errors():
    # 64 = TP 8 · PP 4 · DP 2; 80 layers / 4 = 20; gb 1024 / (2·1) = 512 micro-batches, a multiple of PP.
    errors, warnings = check(tp=8, pp=4, vpp=2, micro_batch=1)
    assert errors == {}
    assert warnings == {}


def test_tp_cp_pp_must_divide_gpus():
    errors, _ = check(tp=8, pp=3)  # 8·3 = 24 does not divide 64
    assert "tp_cp_pp_divides_gpus" in errors
    assert "valid PP with TP=8, CP=1: 1, 2, 4, 8" in errors["tp_cp_pp_divides_gpus"]  # divisors of 64/8
    assert "tp_cp_pp_divides_gpus" not in check(tp=8, pp=2, cp=2)[0]  # 32 divides 64


def test_tp_must_divide_heads_with_the_valid_values():
    errors, _ = check(tp=3)
    assert errors["tp_divides_heads"] == "TP=3 does not divide 64 attention heads; valid TP: 1, 2, 4, 8, 16, 32, 64"


def test_tp_beyond_kv_heads_is_replication_in_megatron_and_an_error_elsewhere():
    # 64 heads / 16 = 4 per rank is fine; 8 KV heads / 16 is not whole.
    errors, warnings = check(n=64, tp=16, framework="megatron")
    assert "tp_divides_kv_heads" not in errors and "kv_heads_replicated" in warnings
    assert "replicated on 2 TP ranks" in warnings["kv_heads_replicated"]  # 16 / 8
    errors, _ = check(n=64, tp=16, framework="fsdp")
    assert "tp_divides_kv_heads" in errors
    assert "valid TP: 1, 2, 4, 8" in errors["tp_divides_kv_heads"]


def test_tp_must_divide_ffn():
    errors, _ = check(model=ODD, tp=4)  # 8190 / 4 = 2047.5
    assert "tp_divides_ffn" in errors and "8,190" in errors["tp_divides_ffn"]
    assert "tp_divides_ffn" not in check(model=ODD, tp=2)[0]  # 8190 / 2 = 4095


def test_pipeline_needs_a_layer_per_chunk():
    assert "pipeline_stages_le_layers" in check(model=ODD, pp=32)[0]  # 32 stages > 30 layers
    errors, _ = check(model=ODD, pp=8, vpp=4)  # 32 chunks > 30 layers
    assert "pipeline_stages_le_layers" in errors and "VPP ≤ 3" in errors["pipeline_stages_le_layers"]  # 30 // 8


def test_vpp_requires_pp():
    assert "vpp_requires_pp" in check(pp=1, vpp=2)[0]
    assert "vpp_requires_pp" not in check(pp=2, vpp=2)[0]


def test_uneven_pipeline_split_is_a_warning_not_an_error():
    errors, warnings = check(model=ODD, pp=4, gb=1024)  # 30 / 4 = 7.5 layers per stage
    assert "uneven_pipeline_split" in warnings and "uneven_pipeline_split" not in errors
    assert "holds 8 layers" in warnings["uneven_pipeline_split"]  # ceil(7.5)
    assert "uneven_pipeline_split" not in check(model=ODD, pp=2)[1]  # 30 / 2 = 15


def test_tp_crossing_a_node_is_warned():
    assert "tp_crosses_node" in check(n=64, tp=16)[1]  # 16 > 8 per node
    assert "tp_crosses_node" not in check(n=64, tp=8)[1]
    # NVL72: 144 GPUs, TP=16 does not tile 72 (72 = 4·16 + 8), TP=8 does (72 = 9·8).
    assert "tp_crosses_node" in check(n=144, per_node=72, tp=16, gb=1152)[1]
    assert "tp_crosses_node" not in check(n=144, per_node=72, tp=8, gb=1152)[1]


def test_gpu_count_not_a_multiple_of_the_node_is_allowed_with_a_warning():
    errors, warnings = check(n=128, per_node=72, tp=8, gb=1024)  # 128 = 72 + 56
    assert errors == {}
    assert "gpus_not_multiple_of_node" in warnings and "plus 56" in warnings["gpus_not_multiple_of_node"]


def test_zero_without_data_parallelism_does_nothing():
    assert "zero_without_dp" in check(n=8, tp=8, zero_stage=1)[1]  # DP = 8/8 = 1
    assert "zero_without_dp" not in check(n=8, tp=8, zero_stage=0)[1]
    assert "zero_without_dp" not in check(n=8, tp=4, cp=2, zero_stage=1)[1]  # shards over the CP pair


def test_expert_parallel_on_a_dense_model_is_an_error():
    assert "expert_parallel_requires_moe" in check(ep=2)[0]
    assert "expert_parallel_requires_moe" in check(etp=2)[0]


def test_ep_must_divide_experts():
    errors, _ = check(model=MOE, n=48, ep=3)  # 8 experts / 3
    assert errors["ep_divides_experts"] == "EP=3 does not divide 8 routed experts; valid EP: 1, 2, 4, 8"
    assert "ep_divides_experts" not in check(model=MOE, n=48, ep=4)[0]


def test_etp_must_divide_expert_ffn():
    assert "etp_divides_expert_ffn" in check(model=MOE, n=48, etp=3)[0]  # 14336 = 2^11·7


def test_moe_mesh_needs_pp_times_max_of_tp_cp_and_ep_etp():
    # Dense layers: TP 2 · DP 12 = 24 GPUs; expert layers: EP 8 · ETP 1 · expert-DP 3 = 24.
    assert "expert_mesh_divides_gpus" not in check(model=MOE, n=24, tp=2, ep=8, gb=1200)[0]
    # EP·ETP = 16 does not divide 24; minimum = PP·max(TP·CP, EP·ETP) = 1·max(2, 16) = 16.
    errors, _ = check(model=MOE, n=24, tp=2, ep=8, etp=2, gb=1200)
    assert "expert_mesh_divides_gpus" in errors and "multiple of PP·lcm(TP·CP, EP·ETP) = 16" in \
        errors["expert_mesh_divides_gpus"]
    # TP 2, PP 4, EP 8: minimum 4·max(2, 8) = 32 GPUs; 16 GPUs are too few, 32 are enough.
    assert "expert_mesh_divides_gpus" in check(model=MOE, n=16, tp=2, pp=4, ep=8)[0]
    assert "expert_mesh_divides_gpus" not in check(model=MOE, n=32, tp=2, pp=4, ep=8)[0]


def test_cp_needs_the_sequence_in_2cp_chunks():
    errors, _ = check(seq=4100, cp=4, gb=1024)  # 4100 % 8 = 4
    assert "cp_divides_seq" in errors and "valid CP: 1, 2" in errors["cp_divides_seq"]  # 4100 % 4 = 0
    assert "cp_divides_seq" not in check(seq=4100, cp=2)[0]


def test_sp_needs_the_sequence_divisible_by_tp():
    assert "sp_divides_seq" in check(seq=4100, tp=8)[0]  # 4100 % 8 = 4
    assert "sp_divides_seq" not in check(seq=4100, tp=8, sequence_parallel=False)[0]
    assert "sp_divides_seq" not in check(seq=4100, tp=4)[0]  # 4100 = 4·1025


def test_global_batch_divisible_by_dp_times_micro_batch():
    # 64 GPUs / TP 8 = DP 8; 100 % 8 = 4.
    errors, _ = check(tp=8, gb=100)
    assert "dp_microbatch_divides_global_batch" in errors
    assert "nearest global batches for this plan: 96, 104" in errors["dp_microbatch_divides_global_batch"]
    assert "dp_microbatch_divides_global_batch" not in check(tp=8, gb=96, micro_batch=4)[0]  # 96 / 32 = 3
    errors, _ = check(tp=8, gb=96, micro_batch=5)  # 96 / 40
    assert "valid micro-batch with DP=8: 1, 2, 3, 4, 6, 12" in errors["dp_microbatch_divides_global_batch"]
    # DP·micro-batch larger than the whole batch: 64 ranks, batch 32.
    assert "exceeds the global batch" in check(gb=32)[0]["dp_microbatch_divides_global_batch"]


def test_megatron_interleaving_needs_micro_batches_in_groups_of_pp():
    # TP 8 · PP 4 → DP 2; gb 12 → 6 micro-batches, not a multiple of PP 4; gb 16 → 8, fine.
    assert "vpp_microbatch_groups" in check(tp=8, pp=4, vpp=2, gb=12)[0]
    assert "vpp_microbatch_groups" not in check(tp=8, pp=4, vpp=2, gb=16)[0]
    assert "vpp_microbatch_groups" not in check(tp=8, pp=4, vpp=2, gb=12, framework="fsdp", zero_stage=3)[0]


def test_few_micro_batches_for_the_stages_is_warned():
    # TP 8 · PP 8 → DP 1; gb 4 → 4 micro-batches < 8 stages; bubble (8-1)/(4+8-1) = 64 %.
    _, warnings = check(tp=8, pp=8, gb=4)
    assert "fewer_microbatches_than_stages" in warnings and "64%" in warnings["fewer_microbatches_than_stages"]


def test_framework_zero_stages(monkeypatch):
    # FSDP2 has no optimizer-only sharding: ZeRO-1 is accepted and runs as ZeRO-2, with a warning.
    errors, warnings = check(framework="fsdp", zero_stage=1)
    assert "framework_supports_zero" not in errors and "zero_stage_alias" in warnings
    assert "runs as ZeRO-2" in warnings["zero_stage_alias"]
    assert "zero_stage_alias" not in check(framework="fsdp", zero_stage=2)[1]
    # A framework without a stage refuses it (data-driven: a flavour offering only 0 and 3).
    from shardwise.engine.validity import frameworks

    only_0_3 = frameworks.CAPABILITIES["deepspeed"].__class__(**{
        **frameworks.CAPABILITIES["deepspeed"].__dict__, "zero_stages": (0, 3), "zero_stages_with_pp": (0,)})
    monkeypatch.setitem(frameworks.CAPABILITIES, "deepspeed", only_0_3)
    errors, _ = check(framework="deepspeed", zero_stage=2)
    assert "framework_supports_zero" in errors and "valid ZeRO: 0, 3" in errors["framework_supports_zero"]
    monkeypatch.undo()
    assert "pipeline_zero_stage" in check(framework="deepspeed", pp=2, zero_stage=3)[0]
    assert "pipeline_zero_stage" not in check(framework="deepspeed", pp=1, zero_stage=3)[0]
    assert "pipeline_zero_stage" not in check(framework="megatron", pp=2, zero_stage=3)[0]


def test_framework_pipeline_schedules_and_expert_tp():
    assert "framework_supports_vpp" in check(framework="deepspeed", pp=2, vpp=2)[0]
    assert "framework_supports_etp" in check(model=MOE, framework="fsdp", zero_stage=3, tp=4, ep=2, etp=2)[0]
    assert "framework_supports_etp" not in check(model=MOE, framework="fsdp", zero_stage=3, tp=4, ep=2, etp=4)[0]


def test_deepspeed_ulysses_splits_heads_over_tp_times_cp():
    # 32 heads: TP 8 · CP 8 = 64 ranks does not divide them; TP 8 · CP 4 = 32 does.
    assert "ulysses_divides_heads" in check(model=ODD, framework="deepspeed", tp=2, cp=32, seq=8192)[0]
    assert "ulysses_divides_heads" not in check(model=ODD, framework="deepspeed", tp=2, cp=16, seq=8192)[0]


def test_hsdp():
    assert "hsdp_divides_dp" in check(framework="fsdp", zero_stage=3, tp=8, hsdp_replicas=3)[0]  # DP 8
    assert "hsdp_requires_sharding" in check(framework="megatron", zero_stage=1, tp=8, hsdp_replicas=2)[0]


def test_moe_with_tp_and_ep_wants_sp():
    assert "moe_tp_ep_without_sp" in check(model=MOE, n=64, tp=2, ep=8, sequence_parallel=False)[1]
    assert "moe_tp_ep_without_sp" not in check(model=MOE, n=64, tp=2, ep=8)[1]


def test_multi_node_moe_plans_say_how_the_all_to_all_is_priced():
    # 64 GPUs = 8 nodes of 8: EP 8 · ETP 1 = 8 ranks stays in a node; EP 8 · ETP 2 = 16 crosses one.
    inside = check(model=MOE, n=64, ep=8)[1]["expert_all_to_all_pricing"]
    assert inside.startswith("EP=8 stays inside a node") and "pass moe_dispatcher deepep" in inside
    across = check(model=MOE, n=64, tp=2, ep=8, etp=2)[1]["expert_all_to_all_pricing"]
    assert across.startswith("EP=8 spans nodes") and "alltoall dispatcher" in across
    # With the dispatcher the user runs, the message says which pricing applies.
    deepep = check(model=MOE, n=64, tp=2, ep=8, etp=2, dispatcher="deepep")[1]["expert_all_to_all_pricing"]
    assert "priced as DeepEP" in deepep and "first-principles" in deepep
    # One node, or a dense model: nothing to say.
    assert "expert_all_to_all_pricing" not in check(model=MOE, n=8, ep=8)[1]
    assert "expert_all_to_all_pricing" not in check(model=DENSE, n=64, tp=8)[1]


def test_fp8_on_a_gpu_without_fp8():
    assert "fp8_unsupported" in check(gpu=A100, precision="fp8", tp=8)[1]
    assert "fp8_unsupported" not in check(gpu=H100, precision="fp8", tp=8)[1]


def test_every_rule_has_a_stable_unique_name():
    names = [r.name for r in validity.RULES]
    assert len(names) == len(set(names))
    assert all(n.replace("_", "").isalnum() and n == n.lower() for n in names)


@pytest.mark.parametrize("model,framework", [(DENSE, "megatron"), (ODD, "deepspeed"), (MOE, "fsdp"),
                                             (MOE, "megatron")])
def test_valid_mask_agrees_with_violations(model, framework):
    """The vectorised form and the one-plan form must never disagree."""
    c = cluster(48)
    setup = TrainingSetup(seq_len=4100, global_batch=96, framework=framework)
    values = dict(tp=[1, 2, 3, 4, 8], pp=[1, 2, 4, 8], vpp=[1, 2], cp=[1, 2, 4], ep=[1, 2, 3, 8],
                  etp=[1, 2], zero_stage=[0, 1, 3], micro_batch=[1, 2, 5])
    combos = list(itertools.product(*values.values()))
    columns = {k: np.array([c_[i] for c_ in combos]) for i, k in enumerate(values)}
    grid = PlanGrid.build(48, 96, **columns, recompute=RECOMPUTE_MODES.index("full"))
    mask = validity.valid_mask(model, c, setup, grid)
    for i in range(0, len(grid), 7):
        errors, _ = validity.violations(model, c, setup, grid.strategy(i))
        assert mask[i] == (not errors), (grid.strategy(i).label(), errors)
    assert mask.any() and not mask.all()


def test_nanotron_capabilities():
    """nanotron (huggingface/nanotron main): ZeRO 0/1 only (any zero_stage > 0 builds the ZeRO-1
    ZeroDistributedOptimizer), engines 1f1b/afab (no VPP), attention asserts
    num_key_value_heads % tp == 0 (8 KV heads: TP 16 refused, no replication), no FP8 recipe."""
    assert not check(framework="nanotron", zero_stage=1)[0]
    assert "framework_supports_zero" in check(framework="nanotron", zero_stage=2)[0]
    assert "framework_supports_zero" in check(framework="nanotron", zero_stage=3)[0]
    assert "framework_supports_vpp" in check(framework="nanotron", pp=4, vpp=2, gb=1024)[0]
    assert "tp_divides_kv_heads" in check(framework="nanotron", n=128, tp=16)[0]
    assert "framework_supports_setup" in check(framework="nanotron", precision="fp8")[0]
    assert "framework_supports_setup" not in check(framework="megatron", precision="fp8")[0]


def test_nanotron_trains_no_adapters():
    setup = TrainingSetup(seq_len=4096, global_batch=1024, framework="nanotron", mode="lora")
    errors, _ = validity.violations(DENSE, cluster(64), setup, Strategy())
    assert [e.rule for e in errors] == ["framework_supports_setup"]
    assert "nanotron trains no LoRA adapters" in errors[0].message


def test_nanotron_runs_no_expert_parallelism_or_mla():
    """nanotron's ParallelContext asserts TP·CP·DP·PP = world size (EP must be 1), and its models
    have no multi-head latent attention (as engine/export/nanotron.py refuses)."""
    errors, _ = check(model=MOE, framework="nanotron", ep=8)
    assert "framework_supports_ep" in errors and "valid EP: 1" in errors["framework_supports_ep"]
    assert "framework_supports_ep" not in check(model=MOE, framework="nanotron", ep=1)[0]
    assert "framework_supports_ep" not in check(model=MOE, framework="megatron", ep=8)[0]
    from shardwise.engine.model_catalog import get_model
    mla_model = get_model("deepseek-v2-lite")
    assert mla_model.mla is not None
    errors, _ = check(model=mla_model, n=16, framework="nanotron")
    assert "framework_supports_setup" in errors and "multi-head latent attention" in errors["framework_supports_setup"]
