"""Megatron-LM command-line arguments (pretrain_gpt.py, flags as of megatron-core 0.16).

Every flag is checked against the option table of Megatron-LM's own parser
(tests/engine/export/data/megatron_lm_flags.json) and the degrees against megatron-core's
parallel_state and TransformerConfig (tests/engine/export/test_megatron.py).

ZeRO stages map to Megatron's own sharding: 1 = --use-distributed-optimizer, 2/3 = Megatron-FSDP
(--data-parallel-sharding-strategy optim_grads / optim_grads_params); HSDP replicas =
--num-distributed-optimizer-instances. Refused: LoRA/QLoRA (pretrain_gpt.py has none — use
megatron-bridge), and an interleaved schedule whose virtual stages do not split the layers
evenly ("number of layers per pipeline stage must be divisible number of layers per virtual
pipeline stage", megatron/training/arguments.py validate_args).
"""

from __future__ import annotations

import shlex

from . import cuda_graphs, defaults, launch
from ..recompute_modules import MEGATRON_DENSE_SELECTIVE_MODULES, selective_modules
from .common import result
from .plan import ExportPlan
from ..setting_text import settings_text
from ..training import MODE_WRITTEN
from .result import ExportRefused, ExportResult

FORMAT = "megatron"
FAMILY = "megatron"


def pipeline_layout(plan: ExportPlan, fmt: str = FORMAT) -> list[str]:
    """Pipeline flags: virtual stages need an even split; an uneven split puts the extra
    layers on the first and last stages (--decoder-first/last-pipeline-num-layers). `fmt`: the format
    a refusal names (Megatron-Bridge checks its split here too)."""
    s, layers = plan.strategy, plan.model.num_layers
    flags = ["--pipeline-model-parallel-size", str(s.pp)]
    if s.pp == 1:
        return flags
    if s.vpp > 1:
        if layers % (s.pp * s.vpp):
            raise ExportRefused(fmt, f"VPP={s.vpp} does not divide the {layers / s.pp:g} layers per pipeline stage "
                                        f"({layers} layers, PP={s.pp}); megatron-core needs layers divisible by PP·VPP "
                                        f"= {s.pp * s.vpp}",
                                "choose VPP dividing the layers per stage")
        return flags + ["--num-layers-per-virtual-pipeline-stage", str(layers // (s.pp * s.vpp))]
    base, extra = divmod(layers, s.pp)
    if extra:
        first, last = base + (extra + 1) // 2, base + extra // 2
        flags += ["--decoder-first-pipeline-num-layers", str(first), "--decoder-last-pipeline-num-layers", str(last)]
    return flags


def parallel_args(plan: ExportPlan) -> list[str]:
    s = plan.strategy
    args = ["--tensor-model-parallel-size", str(s.tp), *pipeline_layout(plan), "--context-parallel-size", str(s.cp)]
    if plan.model.is_moe:
        args += ["--expert-model-parallel-size", str(s.ep), "--expert-tensor-parallel-size", str(s.etp)]
    if plan.sp:
        args.append("--sequence-parallel")
    return args


def data_parallel_args(plan: ExportPlan) -> list[str]:
    s = plan.strategy
    if s.zero_stage == 0:
        return ["--overlap-grad-reduce"]
    if s.zero_stage == 1:
        args = ["--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather"]
    else:
        strategy = "optim_grads" if s.zero_stage == 2 else "optim_grads_params"
        args = ["--use-megatron-fsdp", "--data-parallel-sharding-strategy", strategy, "--ckpt-format", "fsdp_dtensor",
                "--overlap-grad-reduce", "--overlap-param-gather"]
    if s.hsdp_replicas > 1:
        args += ["--num-distributed-optimizer-instances", str(s.hsdp_replicas)]
    return args


def batch_args(plan: ExportPlan) -> list[str]:
    return ["--micro-batch-size", str(plan.strategy.micro_batch), "--global-batch-size", str(plan.global_batch),
            "--seq-length", str(plan.setup.seq_len)]


def precision_args(plan: ExportPlan) -> list[str]:
    args = ["--bf16"]
    if plan.setup.precision == "fp8":
        # E4M3 forward, E5M2 gradients, per-tensor current scaling: Megatron-Bridge's
        # bf16_with_fp8_current_scaling_mixed recipe.
        args += ["--fp8-format", "hybrid", "--fp8-recipe", "tensorwise"]
    if plan.setup.fp8_param_gather:  # FP8 primary weights, gathered in FP8 (TrainingSetup.fp8_param_gather)
        args.append("--fp8-param-gather")
    if plan.setup.grad_reduce_dtype == "bf16":  # BF16 main-gradient buffer and DP reduction
        args.append("--grad-reduce-in-bf16")
    return args


def recompute_args(plan: ExportPlan) -> list[str]:
    if plan.strategy.recompute == "full":
        return ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
    if plan.strategy.recompute == "selective":
        modules = selective_modules(plan.model, plan.setup)
        if not modules:  # recompute_modules = []: Megatron-Core recomputes no module, the same as no recompute flag
            return []
        if modules == MEGATRON_DENSE_SELECTIVE_MODULES and plan.setup.recompute_modules is None:
            return ["--recompute-granularity", "selective"]
        return ["--recompute-granularity", "selective", "--recompute-modules", *modules]
    return []


def a2a_overlap_applies(plan: ExportPlan) -> bool:
    """The EP all-to-all overlap was asked for and this plan meets Megatron-Core's conditions for it (the same
    ones the time model applies, performance/ep.py `overlap_allowed`)."""
    s = plan.strategy
    return (plan.setup.moe_a2a_overlap and plan.setup.moe_dispatcher != "allgather" and s.ep > 1
            and s.recompute != "full" and (s.pp == 1 or s.vpp > 1))


def moe_dispatch_args(plan: ExportPlan) -> list[str]:
    """--moe-token-dispatcher-type as planned (DeepEP is the flex dispatcher's deepep backend) and
    Megatron-Core's EP all-to-all overlap when the plan allows it (performance/ep.py)."""
    if plan.model.moe is None:
        return []
    d = plan.setup.moe_dispatcher
    args = ["--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "deepep"] if d == "deepep" \
        else ["--moe-token-dispatcher-type", d]
    if a2a_overlap_applies(plan):
        args.append("--overlap-moe-expert-parallel-comm")
    return args


def cuda_graph_args(plan: ExportPlan) -> list[str]:
    """--cuda-graph-impl/--cuda-graph-scope as planned (export/cuda_graphs.py); dropout 0 so graphed modules
    can be recomputed; the TE RNG tracker graphs need (Megatron-LM turns it on itself, with a warning);
    full-iteration graphs refuse the NaN check (validate_args: "--no-check-for-nan-in-loss-and-grad should be
    set with full_iteration CUDA graph")."""
    if plan.setup.cuda_graphs == "none":
        return []
    args = ["--cuda-graph-impl", cuda_graphs.IMPL[plan.setup.cuda_graphs], "--cuda-graph-scope",
            *cuda_graphs.graph_scope(plan), "--te-rng-tracker", "--attention-dropout", "0.0", "--hidden-dropout", "0.0"]
    if plan.setup.cuda_graphs == "full-iteration":
        args.append("--no-check-for-nan-in-loss-and-grad")
    return args


def model_args(plan: ExportPlan) -> tuple[list[str], list[str]]:
    """Architecture flags from the ModelSpec, and notes on what the flags cannot say."""
    m, notes = plan.model, []
    args = ["--num-layers", str(m.num_layers), "--hidden-size", str(m.hidden_size),
            "--ffn-hidden-size", str(m.ffn_hidden_size), "--num-attention-heads", str(m.num_attention_heads),
            "--max-position-embeddings", str(max(plan.setup.seq_len, m.max_position_embeddings or 0))]
    if m.kv_heads != m.num_attention_heads:
        args += ["--group-query-attention", "--num-query-groups", str(m.kv_heads)]
    if m.head_dim and m.mla is None and m.head_dim * m.num_attention_heads != m.hidden_size:
        args += ["--kv-channels", str(m.head_dim)]
    args += ["--normalization", "RMSNorm" if m.norm == "rmsnorm" else "LayerNorm"]
    if m.gated_mlp and m.activation in ("silu", "swish"):
        args.append("--swiglu")
    elif m.gated_mlp:
        notes.append(f"{m.name} uses a gated {m.activation} MLP, which Megatron-LM's flags cannot select (only "
                     f"--swiglu): set activation_func in a model provider")
    if m.qk_norm:
        args.append("--qk-layernorm")
    if not (m.qkv_bias or m.mlp_bias or m.attention_out_bias):
        args.append("--disable-bias-linear")
    elif m.qkv_bias and not (m.mlp_bias or m.attention_out_bias):
        args += ["--disable-bias-linear", "--add-qkv-bias"]
    elif not (m.qkv_bias and m.mlp_bias and m.attention_out_bias):
        notes.append("this model has biases on some linear layers only; Megatron-LM's flags set them all or none")
    if not m.tied_embeddings:
        args.append("--untie-embeddings-and-output-weights")
    args += ["--position-embedding-type", "learned_absolute" if m.learned_position_embeddings else "rope"]
    if m.mla is not None:
        args += ["--multi-latent-attention", "--kv-lora-rank", str(m.mla.kv_lora_rank),
                 "--qk-head-dim", str(m.mla.qk_nope_head_dim), "--qk-pos-emb-head-dim", str(m.mla.qk_rope_head_dim),
                 "--v-head-dim", str(m.mla.v_head_dim)]
        if m.mla.q_lora_rank is not None:
            args += ["--q-lora-rank", str(m.mla.q_lora_rank)]
    if m.moe is not None:
        e = m.moe
        args += ["--num-experts", str(e.num_experts), "--moe-router-topk", str(e.top_k),
                 "--moe-ffn-hidden-size", str(e.expert_ffn_hidden_size), "--moe-grouped-gemm",
                 *moe_dispatch_args(plan)]
        if e.num_shared_experts:
            args += ["--moe-shared-expert-intermediate-size", str(e.num_shared_experts * e.shared_ffn)]
        if e.first_k_dense_layers or e.layer_frequency > 1:
            pattern = [0] * e.first_k_dense_layers + [
                1 if i % e.layer_frequency == 0 else 0 for i in range(m.num_layers - e.first_k_dense_layers)]
            args += ["--moe-layer-freq", "[" + ",".join(map(str, pattern)) + "]"]
    if m.parallel_block:
        notes.append("parallel attention+MLP blocks (GPT-J/Falcon style) have no Megatron-LM flag; the flags "
                     "describe a sequential block of the same size")
    if m.sliding_window:
        notes.append(f"sliding-window attention ({m.sliding_window} tokens on some layers) is not set by these flags")
    if m.norms_per_layer > 2:
        notes.append(f"{m.norms_per_layer} norms per layer (pre and post) are not set by these flags")
    return args, notes


def training_args(plan: ExportPlan) -> list[str]:
    """Schedule placeholders Megatron-LM requires; not chosen by shardwise."""
    return ["--train-iters", str(defaults.PLACEHOLDER_TRAIN_STEPS), "--lr", str(defaults.PLACEHOLDER_LEARNING_RATE),
            "--min-lr", f"{defaults.PLACEHOLDER_LEARNING_RATE / 10:g}", "--lr-decay-style", "cosine",
            "--lr-warmup-iters", str(defaults.PLACEHOLDER_WARMUP_STEPS), "--weight-decay", str(defaults.WEIGHT_DECAY),
            "--adam-beta1", str(defaults.ADAM_BETAS[0]), "--adam-beta2", str(defaults.ADAM_BETAS[1]),
            "--clip-grad", str(defaults.GRADIENT_CLIP_NORM)]


def data_args(plan: ExportPlan) -> list[str]:
    """A smoke test on synthetic tokens of the model's vocabulary; replace with your data."""
    return ["--mock-data", "--tokenizer-type", "NullTokenizer", "--vocab-size", str(plan.model.vocab_size)]


def refuse_unexpressible(plan: ExportPlan) -> None:
    if plan.setup.mode != "full":
        raise ExportRefused(FORMAT, f"Megatron-LM's pretrain_gpt.py has no {MODE_WRITTEN[plan.setup.mode]} adapters",
                            settings_text("export {format} megatron-bridge (peft=lora) or use {mode} "
                                          "full", "format", "mode"))
    cuda_graphs.refuse_dropless_moe_full_iteration(plan, FORMAT)
    if plan.setup.fp8_param_gather and plan.strategy.zero_stage == 0:
        # validate_args (core_v0.16.1): "--fp8-param-gather only supported with distributed optimizer, torch
        # fsdp2, megatron fsdp, or inference mode"
        raise ExportRefused(FORMAT, "Megatron-LM runs --fp8-param-gather only with the distributed optimizer or "
                            "Megatron-FSDP, and this plan is ZeRO-0",
                            settings_text("use {zero} 1 or higher, or drop "
                                          "{fp8_param_gather}", "zero", "fp8_param_gather"))


def groups(plan: ExportPlan) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The argument groups in order, and notes."""
    refuse_unexpressible(plan)
    model, notes = model_args(plan)
    return [("MODEL_ARGS", model), ("PARALLEL_ARGS", parallel_args(plan) + data_parallel_args(plan)),
            ("BATCH_ARGS", batch_args(plan)), ("PRECISION_ARGS", precision_args(plan)),
            ("RECOMPUTE_ARGS", recompute_args(plan)), ("CUDA_GRAPH_ARGS", cuda_graph_args(plan)),
            ("TRAINING_ARGS", training_args(plan)),
            ("DATA_ARGS", data_args(plan))], notes


def arguments(plan: ExportPlan) -> list[str]:
    """The full pretrain_gpt.py argument list."""
    return [a for _, group in groups(plan)[0] for a in group]


def _bash_array(name: str, args: list[str]) -> str:
    lines, i = [], 0
    while i < len(args):  # one flag per line, with its value
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            lines.append(f"    {args[i]} {shlex.quote(args[i + 1])}")
            i += 2
        else:
            lines.append(f"    {args[i]}")
            i += 1
    return f"{name}=(\n" + "\n".join(lines) + "\n)\n"


def connections_env(plan: ExportPlan) -> str:
    """Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1 for TP/CP before Blackwell, and
    Megatron-FSDP asserts it is not 1 (megatron/training/arguments.py validate_args)."""
    s = plan.strategy
    if s.zero_stage >= 2:
        return "unset CUDA_DEVICE_MAX_CONNECTIONS  # Megatron-FSDP requires it unset or > 1\n"
    if s.tp > 1 or s.cp > 1:
        return "export CUDA_DEVICE_MAX_CONNECTIONS=1  # required with TP/CP before Blackwell\n"
    return ""


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    arg_groups, own = groups(plan)
    hosts, per_host, host_notes = launch.counts(plan, FORMAT)
    names = [name for name, args in arg_groups if args]
    body = "set -euo pipefail\n" + connections_env(plan) + "\n"
    body += "".join(_bash_array(name, args) for name, args in arg_groups if args)
    body += ("\n# from a Megatron-LM checkout, on each host (NODE_RANK 0.." + str(hosts - 1) + "):\n"
             f"DISTRIBUTED_ARGS=(--nnodes {hosts} --nproc-per-node {per_host} --node-rank \"${{NODE_RANK:-0}}\" "
             f"--master-addr \"${{MASTER_ADDR:-localhost}}\" --master-port \"${{MASTER_PORT:-{defaults.RDZV_PORT}}}\")\n"
             "torchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py \\\n"
             + " \\\n".join(f'    "${{{name}[@]}}"' for name in names) + "\n")
    own += host_notes
    own.append("TRAINING_ARGS and DATA_ARGS are placeholders (schedule, synthetic data): replace them with yours")
    return result(FORMAT, "megatron_lm.sh", plan, "Megatron-LM pretrain_gpt.py arguments", body, notes + own,
                  preamble="#!/usr/bin/env bash\n")
