"""Nanotron YAML config (huggingface/nanotron main, src/nanotron/config/*.py, loaded with
`get_config_from_file`, dacite strict: unknown keys are errors).

The registry's Nanotron (0.4, 2024) neither imports here nor has context parallelism or
layer recompute; this targets main, whose schema the tests validate as its source defines it
(tests/engine/export/data/nanotron_schema.json).

Refused, because Nanotron would run something else than the plan:
- EP > 1: ParallelContext asserts TP·CP·DP·PP = world size and then lays the ranks out as
  (EP, PP, DP, CP, TP), which only fits when EP = 1 (src/nanotron/parallel/context.py);
- ZeRO-2/3: Nanotron has ZeRO-1 only, and any zero_stage > 0 builds it (helpers.py
  `if optimizer_args.zero_stage > 0`), so the plan's memory would not hold;
- VPP > 1 (engines are "1f1b" and "afab"), HSDP, FP8, LoRA/QLoRA, MLA attention;
- TP above the KV heads (config.py asserts num_key_value_heads >= tp).
"""

from __future__ import annotations

import yaml

from ..assumptions.calibrated import HOST_TIME_PER_LAYER_S
from ..assumptions.performance import DEFAULT_ASSUMPTIONS
from ..performance import step_time
from ..plans import PlanGrid
from . import defaults
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .fsdp import hf_model_id
from .plan import ExportPlan
from ..setting_text import settings_text
from ..training import MODE_WRITTEN
from .result import ExportRefused, ExportResult

FORMAT = "nanotron"
FAMILY = "nanotron"  # its own capabilities (engine/validity/frameworks.py) and calibrated profile
# Below this predicted slowdown under nanotron's measured profile the export says nothing.
SLOWER_UNDER_NANOTRON_NOTE_FROM = 0.10


def refuse_unexpressible(plan: ExportPlan) -> None:
    s, m = plan.strategy, plan.model
    if s.ep > 1:
        raise ExportRefused(FORMAT, f"Nanotron cannot run expert parallelism (EP={s.ep}): its ParallelContext "
                                    f"requires TP·CP·DP·PP = world size and lays ranks out as EP·PP·DP·CP·TP",
                            settings_text("use EP=1, or export {format} megatron/torchtitan", "format"))
    if s.zero_stage >= 2:
        raise ExportRefused(FORMAT, f"Nanotron has ZeRO-1 only and runs any zero_stage > 0 as ZeRO-1, so "
                                    f"ZeRO-{s.zero_stage}'s memory savings would not happen",
                            settings_text("use ZeRO-0/1, or export {format} megatron/torchtitan", "format"))
    if s.vpp > 1:
        raise ExportRefused(FORMAT, f"Nanotron has no interleaved pipeline schedule (VPP={s.vpp})", "use VPP=1")
    if s.hsdp_replicas > 1:
        raise ExportRefused(FORMAT, "Nanotron has no hybrid sharding (HSDP)", "use hsdp_replicas=1")
    if plan.setup.precision == "fp8":
        raise ExportRefused(FORMAT, "Nanotron's config has no FP8 training",
                            settings_text("use {precision} bf16", "precision"))
    if plan.setup.mode != "full":
        raise ExportRefused(FORMAT, f"Nanotron trains no {MODE_WRITTEN[plan.setup.mode]} adapters",
                            settings_text("use {mode} full", "mode"))
    if m.mla is not None:
        raise ExportRefused(FORMAT, "Nanotron has no multi-head latent attention (MLA) model",
                            settings_text("export {format} megatron/torchtitan", "format"))
    if s.tp > m.kv_heads:
        raise ExportRefused(FORMAT, f"Nanotron requires KV heads ({m.kv_heads}) >= TP ({s.tp})",
                            f"use TP <= {m.kv_heads}")


def model_config(plan: ExportPlan) -> tuple[dict, list[str]]:
    """A Qwen2Config block (Nanotron's Llama-style decoder, the one that runs ring attention for CP)."""
    m, notes = plan.model, []
    cfg = {
        "is_qwen2_config": True,
        "hidden_size": m.hidden_size,
        "intermediate_size": m.ffn_hidden_size,
        "num_attention_heads": m.num_attention_heads,
        "num_key_value_heads": m.kv_heads,
        "num_hidden_layers": m.num_layers,
        "vocab_size": m.vocab_size,
        "max_position_embeddings": max(plan.setup.seq_len, m.max_position_embeddings or 0),
        "tie_word_embeddings": m.tied_embeddings,
        "attention_bias": m.qkv_bias,
        "hidden_act": "silu" if m.activation in ("silu", "swish") else m.activation,
        "_attn_implementation": "ring" if plan.strategy.cp > 1 else "flash_attention_2",
    }
    if m.moe is not None:
        e = m.moe
        moe_layers = [i for i in range(e.first_k_dense_layers, m.num_layers)
                      if (i - e.first_k_dense_layers) % e.layer_frequency == 0]
        cfg["moe_config"] = {"num_experts": e.num_experts, "top_k": e.top_k,
                             "moe_intermediate_size": e.expert_ffn_hidden_size,
                             "shared_expert_intermediate_size": e.num_shared_experts * e.shared_ffn,
                             "enable_shared_expert": e.num_shared_experts > 0, "layers": moe_layers,
                             "token_dispatcher_type": "alltoall"}
    if not m.gated_mlp or m.norm != "rmsnorm" or m.qk_norm or m.parallel_block or m.norms_per_layer > 2:
        notes.append(f"Nanotron's Qwen2/Llama decoder (gated MLP, RMSNorm, sequential block) differs from "
                     f"{m.name}'s architecture; the parallelism settings still apply")
    return cfg, notes


def nanotron_slowdown(plan: ExportPlan) -> tuple[float, bool]:
    """Predicted extra step time when the plan runs on nanotron instead of the framework it was
    planned for, and whether nanotron's host dispatch then sets the pace. Nanotron's software
    profile is the one calibrated on the Ultra-Scale Playbook sweep (eager kernels, ~4.6 ms of
    host work per layer per micro-batch (calibrated.HOST_TIME_PER_LAYER_S), +2.7 ms × TP when pipeline sends leave the node, no
    TP overlap; engine/assumptions/calibrated.py). A plan evaluated with `--framework nanotron`
    already has this profile: the slowdown is then 0 and no note is written."""
    grid = PlanGrid.from_strategy(plan.strategy, plan.cluster.num_gpus, plan.setup.global_batch)
    planned = step_time(plan.model, plan.cluster, plan.setup, grid).step[0]
    nanotron = DEFAULT_ASSUMPTIONS.running_as(plan.setup.framework, "nanotron")
    t = step_time(plan.model, plan.cluster, plan.setup, grid, nanotron)
    return float(t.step[0] / planned - 1.0), bool(t.details["host_wait_s"][0] > 0)


def speed_note(plan: ExportPlan) -> list[str]:
    slower, host_bound = nanotron_slowdown(plan)
    if slower < SLOWER_UNDER_NANOTRON_NOTE_FROM:
        return []
    how_much = f"{1 + slower:.1f}× as long" if slower >= 1 else f"{slower:.0%} longer"
    advice = ("; nanotron's host dispatch sets the pace here: a larger micro-batch, or pipeline stages "
              "inside one node, narrows the gap") if host_bound else ""
    return [f"shardwise's numbers for this plan are for {plan.setup.framework}; under nanotron's measured "
            f"profile (Ultra-Scale Playbook sweep: eager kernels, ~{HOST_TIME_PER_LAYER_S['nanotron'] * 1e3:.1f} ms host "
            f"time per layer per micro-batch, "
            f"more when pipeline stages sit on different nodes) its step is predicted to take {how_much}"
            f"{advice}"]


def config(plan: ExportPlan) -> tuple[dict, list[str]]:
    refuse_unexpressible(plan)
    s = plan.strategy
    model_cfg, notes = model_config(plan)
    if s.recompute == "selective":
        notes.append(SELECTIVE_AS_FLASH_ATTENTION)
    lr = defaults.PLACEHOLDER_LEARNING_RATE
    cfg = {
        "general": {"project": "shardwise", "run": f"{plan.model.name}-{s.label().replace(' ', '-')}",
                    "seed": 42, "ignore_sanity_checks": True},
        "parallelism": {"dp": plan.dp, "tp": s.tp, "pp": s.pp, "pp_engine": "1f1b",
                        "tp_mode": "REDUCE_SCATTER" if plan.sp else "ALL_REDUCE",
                        "tp_linear_async_communication": plan.sp,
                        "recompute_layer": s.recompute == "full",
                        "expert_parallel_size": s.ep, "context_parallel_size": s.cp},
        "model": {"init_method": {"std": 0.02}, "dtype": "bfloat16", "make_vocab_size_divisible_by": 1,
                  "model_config": model_cfg},
        "tokenizer": {"tokenizer_name_or_path": hf_model_id(plan)},
        "tokens": {"sequence_length": plan.setup.seq_len, "train_steps": defaults.PLACEHOLDER_TRAIN_STEPS,
                   "micro_batch_size": s.micro_batch, "batch_accumulation_per_replica": plan.grad_accum},
        "optimizer": {"zero_stage": s.zero_stage, "weight_decay": defaults.WEIGHT_DECAY,
                      "clip_grad": defaults.GRADIENT_CLIP_NORM, "accumulate_grad_in_fp32": True,
                      "learning_rate_scheduler": {"learning_rate": lr,
                                                  "lr_warmup_steps": defaults.PLACEHOLDER_WARMUP_STEPS,
                                                  "lr_warmup_style": "linear", "lr_decay_style": "cosine",
                                                  "min_decay_lr": lr / 10},
                      "optimizer_factory": {"name": "adamW", "adam_beta1": defaults.ADAM_BETAS[0],
                                            "adam_beta2": defaults.ADAM_BETAS[1], "adam_eps": defaults.ADAM_EPS,
                                            "torch_adam_is_fused": True}},
        "checkpoints": {"checkpoints_path": "checkpoints", "checkpoint_interval": defaults.PLACEHOLDER_TRAIN_STEPS},
        "logging": {"log_level": "info", "log_level_replica": "info", "iteration_step_info_interval": 1},
        "data_stages": [{"name": "stable", "start_training_step": 1,
                         "data": {"dataset": None, "seed": 42, "num_loading_workers": 1}}],
    }
    notes += speed_note(plan)
    notes.append("data_stages uses Nanotron's dummy data (dataset: null), and train_steps/learning rate are "
                 "placeholders: replace them with yours")
    return cfg, notes


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    cfg, own = config(plan)
    body = yaml.safe_dump(cfg, sort_keys=False)
    return result(FORMAT, "nanotron_config.yaml", plan, "Nanotron config (run_train.py --config-file)", body,
                  notes + own)
