"""Megatron-Bridge recipe overrides (scripts/training/run_recipe.py KEY=VALUE, Bridge 0.6).

A recipe sets its own parallelism (llama3_70b's recipes carry context_parallel_size = 2 on
some variants, pipeline_dtype = None, sequence_parallel = False...), and an override that
is left out keeps the recipe's value. So every dimension is pinned — TP, PP, VPP (null when
1), CP, EP, ETP, SP, micro and global batch, sequence length, ZeRO-equivalent DP sharding,
recompute and precision — whatever the recipe says. Precision goes through a mixed-precision
recipe (bf16_mixed / bf16_with_fp8_current_scaling_mixed), which also sets
model.pipeline_dtype = torch.bfloat16: megatron-core rejects PP > 1 without pipeline_dtype, and
a string override of model.pipeline_dtype would stay a string when the recipe's value is None
(Bridge converts strings back to dtypes only over an existing dtype, omegaconf_utils.py).

Keys are checked against megatron-core 0.16's TransformerConfig / DistributedDataParallelConfig
/ OptimizerConfig fields and Bridge's own config dataclasses (tests/engine/export).
"""

from __future__ import annotations

from . import cuda_graphs, launch, megatron
from ..recompute_modules import selective_modules
from .common import result
from .plan import ExportPlan
from ..setting_text import SettingsText, settings_text
from .result import ExportRefused, ExportResult
from .torchtitan import model_key

FORMAT = "megatron-bridge"
FAMILY = "megatron"

# Recipe functions exported by megatron.bridge.recipes (v0.6.0 aliases).
RECIPE_STEMS: dict[str, str] = {
    "llama-3-8b": "llama3_8b", "llama-3-70b": "llama3_70b", "llama-3.1-8b": "llama31_8b",
    "llama-3.1-70b": "llama31_70b", "llama-3.1-405b": "llama31_405b", "llama-3.2-1b": "llama32_1b",
    "llama-3.2-3b": "llama32_3b", "qwen3-0.6b": "qwen3_600m", "qwen3-1.7b": "qwen3_1p7b", "qwen3-4b": "qwen3_4b",
    "qwen3-8b": "qwen3_8b", "qwen3-14b": "qwen3_14b", "qwen3-32b": "qwen3_32b", "qwen3-30b-a3b": "qwen3_30b_a3b",
    "qwen3-235b-a22b": "qwen3_235b_a22b", "deepseek-v2-lite": "deepseek_v2_lite", "deepseek-v2": "deepseek_v2",
    "deepseek-v3": "deepseek_v3",
}

MIXED_PRECISION = {"bf16": "bf16_mixed", "fp8": "bf16_with_fp8_current_scaling_mixed"}


def recipe(plan: ExportPlan) -> tuple[str, list[str]]:
    stem = RECIPE_STEMS.get(model_key(plan.model.name))
    kind = "peft" if plan.setup.mode == "lora" else "pretrain"
    if stem is None:
        return f"<your_model>_{kind}_config", [f"Megatron-Bridge ships no recipe for {plan.model.name}: start from "
                                               f"the recipe of the closest architecture"]
    if kind == "peft" and stem == "deepseek_v3":
        return f"{stem}_pretrain_config", ["DeepSeek-V3 has no PEFT recipe in Megatron-Bridge 0.6"]
    return f"{stem}_{kind}_config", []


def uneven_split(plan: ExportPlan) -> list[tuple[str, str]]:
    """Layers that do not divide over PP: the extra ones go to the first and last stages, as
    Megatron-LM's --decoder-first/last-pipeline-num-layers put them (megatron-core
    TransformerConfig num_layers_in_first/last_pipeline_stage; the middle stages keep the base)."""
    s, layers = plan.strategy, plan.model.num_layers
    if s.pp == 1 or s.vpp > 1 or layers % s.pp == 0:
        return []
    base, extra = divmod(layers, s.pp)
    first, last = base + (extra + 1) // 2, base + extra // 2
    return [("model.num_layers_in_first_pipeline_stage", str(first)),
            ("model.num_layers_in_last_pipeline_stage", str(last))]


def overrides(plan: ExportPlan) -> list[tuple[str, str]]:
    """(key, value) pairs, Hydra syntax: null, true/false, [a,b]."""
    s = plan.strategy
    if plan.setup.mode == "qlora":
        raise ExportRefused(FORMAT, "Megatron-Bridge has no 4-bit QLoRA", settings_text("use {mode} lora or full", "mode"))
    megatron.pipeline_layout(plan, FORMAT)  # refuses VPP that does not split the layers evenly

    def b(x: bool) -> str:
        return "true" if x else "false"

    pairs = [
        ("model.tensor_model_parallel_size", str(s.tp)),
        ("model.pipeline_model_parallel_size", str(s.pp)),
        ("model.virtual_pipeline_model_parallel_size", str(s.vpp) if s.vpp > 1 else "null"),
        *uneven_split(plan),
        ("model.context_parallel_size", str(s.cp)),
        ("model.expert_model_parallel_size", str(s.ep)),
        ("model.expert_tensor_parallel_size", str(s.etp)),
        ("model.sequence_parallel", b(plan.sp)),
        ("model.seq_length", str(plan.setup.seq_len)),
        ("dataset.seq_length", str(plan.setup.seq_len)),
        ("train.micro_batch_size", str(s.micro_batch)),
        ("train.global_batch_size", str(plan.global_batch)),
    ]
    if s.recompute == "full":
        pairs += [("model.recompute_granularity", "full"), ("model.recompute_method", "uniform"),
                  ("model.recompute_num_layers", "1")]
    elif s.recompute == "selective":
        pairs += [("model.recompute_granularity", "selective"), ("model.recompute_method", "null"),
                  ("model.recompute_num_layers", "null"), ("model.recompute_modules", "[" + ",".join(selective_modules(plan.model, plan.setup)) + "]")]
    else:
        pairs += [("model.recompute_granularity", "null"), ("model.recompute_method", "null"),
                  ("model.recompute_num_layers", "null")]
    fsdp = s.zero_stage >= 2
    pairs += [
        ("ddp.use_distributed_optimizer", b(s.zero_stage >= 1)),
        ("optimizer.use_distributed_optimizer", b(s.zero_stage >= 1)),
        ("ddp.use_megatron_fsdp", b(fsdp)),
        ("ddp.data_parallel_sharding_strategy",
         {0: "no_shard", 1: "no_shard", 2: "optim_grads", 3: "optim_grads_params"}[s.zero_stage]),
        ("ddp.num_distributed_optimizer_instances", str(s.hsdp_replicas)),
    ]
    if fsdp:
        pairs.append(("checkpoint.ckpt_format", "fsdp_dtensor"))
    pairs += cuda_graph_overrides(plan)
    pairs.append(("mixed_precision", MIXED_PRECISION[plan.setup.precision]))
    if plan.setup.mode == "lora":
        pairs += [("peft.dim", str(plan.setup.lora_rank))]
    return pairs


def cuda_graph_overrides(plan: ExportPlan) -> list[tuple[str, str]]:
    """The plan's CUDA graphs as TransformerConfig fields (export/cuda_graphs.py), always written so the
    recipe's own graph setting cannot stay behind: Bridge's perf recipes turn graphs on themselves."""
    if plan.setup.cuda_graphs == "none":
        return [("model.cuda_graph_impl", "none")]
    pairs = [("model.cuda_graph_impl", cuda_graphs.IMPL[plan.setup.cuda_graphs]),
             ("model.cuda_graph_scope", "[" + ",".join(cuda_graphs.graph_scope(plan)) + "]"),
             ("model.use_te_rng_tracker", "true"), ("model.attention_dropout", "0.0"), ("model.hidden_dropout", "0.0")]
    if plan.setup.cuda_graphs == "full-iteration":  # no NaN check inside the graph (Bridge's CUDA-graph guide)
        pairs.append(("ddp.check_for_nan_in_grad", "false"))
    return pairs


def cuda_graph_notes(plan: ExportPlan) -> list[str]:
    """What the overrides cannot set (sections the checked schema does not list), as Bridge's CUDA-graph
    guide enables graphs."""
    mode = plan.setup.cuda_graphs
    if mode == "none":
        return []
    notes = ["CUDA graphs also want rng.te_rng_tracker=true" + (" and rerun_state_machine.check_for_nan_in_loss=false"
                                                                 if mode == "full-iteration" else "")
             + " (Bridge's CUDA-graph guide); set them in the recipe (these overrides do not)"]
    if mode == "full-iteration" and plan.model.is_moe:
        notes.append("full-iteration graphs of this dropless MoE were priced with Megatron-Core's sync-free expert "
                     "path (flex dispatcher with HybridEP, model.moe_expert_rank_capacity_factor, "
                     "model.use_transformer_engine_op_fuser, model.moe_paged_stash; newer Megatron-Core spells the "
                     "graphs model.cuda_graph_impl=full_iteration), as Bridge's full-iteration MoE perf recipes set "
                     "it (perf_recipes/deepseek/common.py _enable_deepseek_full_iteration_mxfp8); megatron-core "
                     "0.16.1 (the schema these overrides are checked against) has none of these fields, so start "
                     "from one of those recipes")
    return notes


def precision_notes(plan: ExportPlan) -> list[str | SettingsText]:
    """BF16 gradients and FP8 primary weights as recipe code, not overrides: they are MixedPrecisionConfig
    fields (grad_reduce_in_fp32, fp8_param_gather) that Bridge copies onto the DDP and model configs at setup
    (training/mixed_precision.py update_config_with_precision_overrides, called from config.py), so a
    ddp.grad_reduce_in_fp32 override is overwritten, and mixed_precision.* cannot be overridden while
    mixed_precision is a preset name (Hydra: "Could not override 'mixed_precision.…'")."""
    setup, out = plan.setup, []
    if setup.grad_reduce_dtype == "bf16":
        out.append("the plan keeps and reduces gradients in BF16: in the recipe set cfg.mixed_precision = "
                   "get_mixed_precision_config(cfg.mixed_precision); cfg.mixed_precision.grad_reduce_in_fp32 = "
                   "False; cfg.ddp.grad_reduce_in_fp32 = False (as Bridge's performance recipes do; an override "
                   "of ddp.grad_reduce_in_fp32 alone is reset by the mixed-precision preset)")
    if setup.precision == "fp8" and setup.fp8_param_gather:
        out.append(f"{MIXED_PRECISION['fp8']} keeps FP8 primary weights (fp8_param_gather = True), as the plan "
                   "was priced")
    elif setup.precision == "fp8":
        out.append(settings_text(
            f"{MIXED_PRECISION['fp8']} turns on fp8_param_gather (FP8 primary weights), which the plan was priced "
            "without: set cfg.mixed_precision.fp8_param_gather = False in the recipe to match, or price it with "
            "{fp8_param_gather}", "fp8_param_gather"))
    return out


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    pairs = overrides(plan)
    name, own = recipe(plan)
    hosts, per_host, host_notes = launch.counts(plan, FORMAT)
    lines = ["set -euo pipefail", megatron.connections_env(plan).rstrip("\n"),
             "# from a Megatron-Bridge checkout, on each host (NODE_RANK 0.." + str(hosts - 1) + "):",
             f"torchrun --nnodes {hosts} --nproc-per-node {per_host} --node-rank \"${{NODE_RANK:-0}}\" "
             f"--master-addr \"${{MASTER_ADDR:-localhost}}\" --master-port \"${{MASTER_PORT:-29500}}\" \\",
             f"    scripts/training/run_recipe.py --recipe {name} \\"]
    lines += [f"    {k}={v} \\" for k, v in pairs[:-1]] + [f"    {pairs[-1][0]}={pairs[-1][1]}"]
    body = "\n".join(line for line in lines if line) + "\n"
    own += host_notes + cuda_graph_notes(plan) + precision_notes(plan)
    if plan.strategy.pp > 1:  # megatron-core's ModelParallelConfig.__post_init__ asks for it only then
        own.append("mixed_precision sets model.pipeline_dtype (required by megatron-core when PP > 1)")
    overlap = megatron.a2a_overlap_applies(plan)  # asked for on a plan that cannot overlap: priced without it
    if plan.model.moe is not None and (plan.setup.moe_dispatcher != "alltoall" or overlap):
        # Not written as overrides: the checked Bridge config schema (tests/engine/export/data) does not
        # list these model fields, so the recipe's own values apply unless the user sets them.
        own.append(f"the plan was priced with the {plan.setup.moe_dispatcher} dispatcher"
                   + (" and EP all-to-all overlap" if overlap else "")
                   + ": set model.moe_token_dispatcher_type / model.moe_flex_dispatcher_backend"
                   + (" and comm_overlap.overlap_moe_expert_parallel_comm" if overlap else "")
                   + " in the recipe to match (these overrides do not set them)")
    return result(FORMAT, "megatron_bridge.sh", plan, "Megatron-Bridge run_recipe.py overrides", body, notes + own,
                  preamble="#!/usr/bin/env bash\n")
