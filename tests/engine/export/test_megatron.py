"""Megatron-LM arguments: every flag parses with Megatron-LM's own option table, the degrees
build megatron-core's process groups (torch's fake process group at the plan's GPU count)
and TransformerConfig, and the numbers are the plan's.

Megatron-LM's training parser is not in the megatron-core wheel: its option table was taken
from the real parser at core_v0.16.1 (data/make_megatron_lm_flags.py). Expected numbers are
worked out beside each case: DP = GPUs / (TP·CP·PP), grad-accum = global / (DP·micro).
"""

from __future__ import annotations

import shutil
import subprocess
import warnings

import pytest
import torch

from shardwise.engine.export import ExportRefused
from shardwise.engine.export.megatron import arguments
from shardwise.engine.export.plan import ExportPlan

from export_megatron_tools import bash_arrays, megatron_lm_layout, parse

CASES = [
    # Llama-3-70B, 64 GPUs: TP8·PP2 -> DP 4, GA 512/4 = 128; 80 layers / (2·5) = 8 per virtual stage.
    ("tp8-pp2-vpp5", dict(model="llama-3-70b", gpus=64, seq_len=8192, global_batch=512, tp=8, pp=2, vpp=5,
                          zero_stage=1, recompute="selective"), dict(dp=4, ga=128, vpp=5, stages=None)),
    # 48 GPUs, TP8·PP3 -> DP 2, GA 256/2 = 128; 80 = 27 + 26 + 27 (extra layers on the first and last).
    ("tp8-pp3-uneven", dict(model="llama-3-70b", gpus=48, global_batch=256, tp=8, pp=3, zero_stage=1,
                            recompute="full"), dict(dp=2, ga=128, vpp=1, stages=[27, 26, 27])),
    # DeepSeek-V3 (MLA, MoE), 256 GPUs: TP2·PP8 -> DP 16, GA 1024/16 = 64; 61 = 10 + 6·7 + 9;
    # EP 16 over TP·CP·DP = 32 ranks -> expert DP 2.
    ("deepseek-v3-ep16-fp8", dict(model="deepseek-v3", gpus=256, global_batch=1024, tp=2, pp=8, ep=16,
                                  zero_stage=1, recompute="full", precision="fp8"),
     dict(dp=16, ga=64, vpp=1, stages=[10, 7, 7, 7, 7, 7, 7, 9], expert_dp=2)),
    # Llama-3-8B, 16 GPUs, CP2 -> DP 8, GA 64/8 = 8; ZeRO-3 = Megatron-FSDP, HSDP 2 replicas.
    ("cp2-fsdp-hsdp", dict(model="llama-3-8b", gpus=16, seq_len=16384, global_batch=64, cp=2, zero_stage=3,
                           hsdp_replicas=2, recompute="none"), dict(dp=8, ga=8, vpp=1, stages=None)),
]


@pytest.fixture
def fake_world():
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from megatron.core import parallel_state

    def start(world_size: int):
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
        return parallel_state

    yield start
    from megatron.core import parallel_state

    parallel_state.destroy_model_parallel()
    if dist.is_initialized():
        dist.destroy_process_group()


def transformer_config(ns, plan: ExportPlan):
    """megatron-core's config from the parsed flags, as Megatron-LM's
    core_transformer_config_from_args maps them (pipeline_dtype = params_dtype = bf16 for --bf16).
    FP8 fields are left out: TransformerConfig checks Transformer Engine's version, absent on CPU."""
    from megatron.core.transformer.transformer_config import MLATransformerConfig, TransformerConfig

    dtype = torch.bfloat16 if ns.bf16 else torch.float32
    kwargs = dict(
        num_layers=ns.num_layers, hidden_size=ns.hidden_size, num_attention_heads=ns.num_attention_heads,
        ffn_hidden_size=ns.ffn_hidden_size, num_query_groups=ns.num_query_groups if ns.group_query_attention else None,
        tensor_model_parallel_size=ns.tensor_model_parallel_size,
        pipeline_model_parallel_size=ns.pipeline_model_parallel_size,
        context_parallel_size=ns.context_parallel_size, expert_model_parallel_size=ns.expert_model_parallel_size,
        expert_tensor_parallel_size=ns.expert_tensor_parallel_size, sequence_parallel=bool(ns.sequence_parallel),
        bf16=bool(ns.bf16), params_dtype=dtype, pipeline_dtype=dtype,
        recompute_granularity=ns.recompute_granularity, recompute_method=ns.recompute_method,
        recompute_num_layers=ns.recompute_num_layers, normalization=ns.normalization,
        gated_linear_unit=bool(ns.swiglu), add_bias_linear=ns.add_bias_linear,
        num_layers_in_first_pipeline_stage=ns.decoder_first_pipeline_num_layers,
        num_layers_in_last_pipeline_stage=ns.decoder_last_pipeline_num_layers)
    layout = megatron_lm_layout(ns)
    if layout["vpp"] > 1:
        kwargs["virtual_pipeline_model_parallel_size"] = layout["vpp"]
    if ns.num_experts:
        kwargs.update(num_moe_experts=ns.num_experts, moe_router_topk=ns.moe_router_topk,
                      moe_ffn_hidden_size=ns.moe_ffn_hidden_size,
                      moe_shared_expert_intermediate_size=ns.moe_shared_expert_intermediate_size,
                      moe_layer_freq=ns.moe_layer_freq, moe_grouped_gemm=bool(ns.moe_grouped_gemm),
                      moe_token_dispatcher_type=ns.moe_token_dispatcher_type)
    if ns.multi_latent_attention:
        kwargs.update(q_lora_rank=ns.q_lora_rank, kv_lora_rank=ns.kv_lora_rank, qk_head_dim=ns.qk_head_dim,
                      qk_pos_emb_head_dim=ns.qk_pos_emb_head_dim, v_head_dim=ns.v_head_dim)
        return MLATransformerConfig(**kwargs)
    return TransformerConfig(**kwargs)


@pytest.mark.parametrize("case_id,kwargs,want", CASES, ids=[c[0] for c in CASES])
def test_megatron_args_parse_and_build_the_plan(scenario, fake_world, case_id, kwargs, want):
    warnings.filterwarnings("ignore")
    sc = scenario(**kwargs)
    exported = sc.export("megatron")
    s, gpus = sc.strategy, sc.cluster.num_gpus

    arrays = bash_arrays(exported.text)
    script_args = [a for name, values in arrays.items() if name != "DISTRIBUTED_ARGS" for a in values]
    plan = ExportPlan(sc.model, sc.cluster, sc.setup, s)
    assert script_args == arguments(plan)

    ns = parse(script_args)  # unknown flags, wrong types or choices fail here
    layout = megatron_lm_layout(ns)
    assert (ns.tensor_model_parallel_size, ns.pipeline_model_parallel_size, ns.context_parallel_size) == (s.tp, s.pp, s.cp)
    assert layout["vpp"] == want["vpp"] and layout["stages"] == want["stages"]
    if sc.model.is_moe:
        assert (ns.expert_model_parallel_size, ns.expert_tensor_parallel_size) == (s.ep, s.etp)
    assert bool(ns.sequence_parallel) == (s.tp > 1 and s.sequence_parallel)
    dp = gpus // (ns.tensor_model_parallel_size * ns.pipeline_model_parallel_size * ns.context_parallel_size)
    assert dp == want["dp"]
    assert ns.global_batch_size % (ns.micro_batch_size * dp) == 0
    assert ns.global_batch_size // (ns.micro_batch_size * dp) == want["ga"]
    assert ns.global_batch_size == sc.setup.global_batch and ns.micro_batch_size == s.micro_batch
    assert ns.seq_length == sc.setup.seq_len
    assert ns.bf16 is True
    assert ns.fp8 == ("hybrid" if sc.setup.precision == "fp8" else None)
    assert ns.recompute_granularity == {"none": None, "selective": "selective", "full": "full"}[s.recompute]
    assert bool(ns.use_distributed_optimizer) == (s.zero_stage == 1)
    assert bool(ns.use_megatron_fsdp) == (s.zero_stage >= 2)
    if s.zero_stage >= 2:
        assert ns.data_parallel_sharding_strategy == {2: "optim_grads", 3: "optim_grads_params"}[s.zero_stage]
    assert ns.num_distributed_optimizer_instances == s.hsdp_replicas

    transformer_config(ns, plan)  # megatron-core's own checks on the model-parallel settings

    parallel_state = fake_world(gpus)
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=ns.tensor_model_parallel_size,
        pipeline_model_parallel_size=ns.pipeline_model_parallel_size,
        virtual_pipeline_model_parallel_size=layout["vpp"] if layout["vpp"] > 1 else None,
        context_parallel_size=ns.context_parallel_size, expert_model_parallel_size=ns.expert_model_parallel_size,
        expert_tensor_parallel_size=ns.expert_tensor_parallel_size,
        num_distributed_optimizer_instances=ns.num_distributed_optimizer_instances, create_gloo_process_groups=False)
    assert parallel_state.get_data_parallel_world_size() == want["dp"]
    if "expert_dp" in want:
        assert parallel_state.get_expert_data_parallel_world_size() == want["expert_dp"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_megatron_script_is_valid_bash(scenario):
    text = scenario("llama-3-70b", 64, tp=8, pp=2, zero_stage=1).export("megatron").text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_megatron_core_rejects_pipeline_without_dtype():
    """The trap: PP > 1 needs pipeline_dtype (Megatron-LM sets it from --bf16; Bridge from mixed_precision)."""
    from megatron.core.transformer.transformer_config import TransformerConfig

    with pytest.raises(ValueError, match="pipeline_dtype"):
        TransformerConfig(num_layers=8, hidden_size=64, num_attention_heads=8, pipeline_model_parallel_size=2)


def test_vpp_that_does_not_split_the_stage_is_refused(scenario):
    # 80 layers, PP 2 -> 40 per stage; VPP 3 would need 40/3 layers per virtual stage.
    with pytest.raises(ExportRefused, match="VPP=3"):
        scenario("llama-3-70b", 64, tp=8, pp=2, vpp=3, zero_stage=1, global_batch=512).export("megatron")


def test_lora_is_refused_with_a_pointer_to_bridge(scenario):
    with pytest.raises(ExportRefused, match="megatron-bridge"):
        scenario("llama-3-8b", 8, mode="lora").export("megatron")
