"""DeepSpeed JSON config (DeepSpeed 0.19: `deepspeed.runtime.config.DeepSpeedConfig`).

Every key written is one DeepSpeedConfig reads (DeepSpeed ignores unknown top-level keys, so
a comment key or a typo would load silently; tests/engine/export/test_deepspeed.py records
the keys DeepSpeedConfig looks up). The header therefore lives outside the JSON.

What DeepSpeed alone cannot express, and so is refused:
- FP8 training: no config switch (FP8 GEMMs come from Transformer Engine modules in code);
- HSDP: MiCS, DeepSpeed's hierarchical sharding, was removed in 0.19 (runtime/config.py
  `_REMOVED_ZERO_CONFIG_KEYS`); ZeRO++ hpZ is a different layout;
- PP > 1 together with TP, EP or CP: its pipeline engine (PipelineModule) runs with neither
  AutoTP, AutoEP nor Ulysses — TP with PP needs Megatron-DeepSpeed (export --format megatron);
- ETP > 1: AutoEP reserves expert_tensor_parallel_size != 1 (module_inject/auto_ep_folding.py);
- TP together with CP: Ulysses' process groups split the world into SP x DP only
  (runtime/sequence_parallel/parallel_state_sp.py), leaving no TP group;
- EP with ZeRO-3 and CP: "AutoEP with ZeRO Stage 3 does not support sequence parallelism yet"
  (runtime/engine.py `_validate_zero3_moe_compatibility`).
"""

from __future__ import annotations

import json

from . import defaults
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .plan import ExportPlan
from ..setting_text import settings_text
from .result import ExportRefused, ExportResult

FORMAT = "deepspeed"
FAMILY = "deepspeed"


def refuse_unexpressible(plan: ExportPlan) -> None:
    s = plan.strategy
    if plan.setup.precision == "fp8":
        raise ExportRefused(FORMAT, "DeepSpeed's config has no FP8 training switch (FP8 comes from Transformer "
                                    "Engine layers in the model code)",
                            settings_text("use {precision} bf16 for DeepSpeed, or export {format} "
                                          "megatron/torchtitan/accelerate", "precision", "format"),
                            rule="fp8")
    if s.hsdp_replicas > 1:
        raise ExportRefused(FORMAT, f"HSDP ({s.hsdp_replicas} replicas) needs hierarchical ZeRO-3 sharding, and "
                                    "DeepSpeed 0.19 removed MiCS (zero_optimization.mics_shard_size)",
                            settings_text("use hsdp_replicas=1, or export {format} "
                                          "torchtitan/fsdp/accelerate", "format"), rule="hsdp")
    if s.pp > 1 and (s.tp > 1 or s.ep > 1 or s.cp > 1):
        used = ", ".join(f"{n}={v}" for n, v in (("TP", s.tp), ("EP", s.ep), ("CP", s.cp)) if v > 1)
        raise ExportRefused(FORMAT, f"DeepSpeed's pipeline engine (PP={s.pp}) cannot be combined with its automatic "
                                    f"tensor/expert parallelism or Ulysses ({used})",
                            settings_text("TP with PP needs Megatron-DeepSpeed: export {format} megatron, or use "
                                          "PP=1", "format"),
                            rule="pp_with_tp_ep_cp")
    if s.etp > 1:
        raise ExportRefused(FORMAT, f"AutoEP does not support expert tensor parallelism (ETP={s.etp})",
                            "use ETP=1 for DeepSpeed", rule="etp")
    if s.tp > 1 and s.cp > 1:
        raise ExportRefused(FORMAT, f"Ulysses sequence parallelism (CP={s.cp}) splits the ranks into SP x DP only, "
                                    f"leaving no group for AutoTP (TP={s.tp})",
                            settings_text("use TP=1 with CP, or export {format} megatron/torchtitan", "format"),
                            rule="tp_with_ulysses_cp")
    if s.ep > 1 and s.cp > 1 and s.zero_stage == 3:
        raise ExportRefused(FORMAT, "AutoEP with ZeRO-3 does not support Ulysses sequence parallelism",
                            settings_text("use ZeRO-1/2, CP=1, or export {format} megatron", "format"),
                            rule="ep_zero3_with_ulysses_cp")


def zero_section(plan: ExportPlan) -> dict:
    stage, hidden = plan.strategy.zero_stage, plan.model.hidden_size
    section: dict = {"stage": stage}
    if stage == 0:
        return section
    section.update({
        "overlap_comm": True,
        "contiguous_gradients": True,
        "reduce_scatter": True,
        "reduce_bucket_size": defaults.deepspeed_reduce_bucket(hidden),
    })
    if stage == 3:
        section.update({
            "stage3_prefetch_bucket_size": defaults.deepspeed_stage3_prefetch_bucket(hidden),
            "stage3_param_persistence_threshold": defaults.deepspeed_stage3_persistence_threshold(hidden),
            "stage3_gather_16bit_weights_on_model_save": True,
        })
    return section


def config(plan: ExportPlan) -> tuple[dict, list[str]]:
    """The DeepSpeed config dict and what the user must do in code for it to mean the plan."""
    refuse_unexpressible(plan)
    s = plan.strategy
    notes: list[str] = []
    cfg: dict = {
        "train_batch_size": plan.global_batch,
        "train_micro_batch_size_per_gpu": s.micro_batch,
        "gradient_accumulation_steps": plan.grad_accum,
        "gradient_clipping": defaults.GRADIENT_CLIP_NORM,
        "bf16": {"enabled": True},
        "zero_optimization": zero_section(plan),
    }
    if s.tp > 1:
        cfg["tensor_parallel"] = {"autotp_size": s.tp}
        notes.append(f"TP={s.tp} is DeepSpeed AutoTP (Hugging Face models). train_batch_size counts the {plan.dp} "
                     f"data-parallel ranks, as DeepSpeed does when deepspeed.initialize gets the TP groups as mpu "
                     f"(deepspeed.utils.groups after groups._init_tp_mesh_device({s.tp})); without an mpu it counts "
                     f"all {plan.cluster.num_gpus} ranks and rejects the batch. AutoTP shards the linear layers only"
                     + (" — no Megatron sequence parallelism, so activations between them are not sharded over TP: "
                        "evaluate it again without sequence parallelism to check the plan still fits" if plan.sp
                        else ""))
    if s.ep > 1:
        cfg["expert_parallel"] = {"enabled": True, "autoep_size": s.ep}
        notes.append(f"EP={s.ep} is DeepSpeed AutoEP, which replaces the Hugging Face MoE layers at initialize")
        if plan.setup.moe_dispatcher == "deepep":  # AutoEP's DeepEP backend (module_inject/auto_ep_config.py)
            cfg["expert_parallel"]["comm_backend"] = "deepep"
            notes.append("the plan was priced with DeepEP: expert_parallel.comm_backend = \"deepep\" (needs the "
                         "DeepEP package, github.com/deepseek-ai/DeepEP)")
    if s.cp > 1:
        cfg["sequence_parallel_size"] = s.cp
        notes.append(f"CP={s.cp} is Ulysses sequence parallelism: register it with "
                     f"UlyssesSPAttentionHF.register_with_transformers(..., sequence_parallel_size={s.cp}, "
                     f"micro_batch_size={s.micro_batch}) and pass the returned mpu to deepspeed.initialize")
    if s.pp > 1:
        # Only the keys PipelineEngine reads (runtime/pipe/engine.py); the stage count is
        # PipelineModule's num_stages argument, not a config key.
        cfg["pipeline"] = {"activation_checkpoint_interval": 1 if s.recompute == "full" else 0}
        notes.append(f"PP={s.pp}: build the model as deepspeed.pipe.PipelineModule(layers, num_stages={s.pp}, "
                     f"partition_method='parameters'); its engine runs {plan.grad_accum} micro-batches per "
                     f"train_batch()")
    if s.recompute == "full":
        cfg["activation_checkpointing"] = {"partition_activations": False, "contiguous_memory_optimization": False,
                                           "cpu_checkpointing": False}
        notes.append("recompute 'full': checkpoint every transformer layer — model.gradient_checkpointing_enable() "
                     "for Hugging Face models, or deepspeed.checkpointing.checkpoint around each layer")
    elif s.recompute == "selective":
        notes.append(SELECTIVE_AS_FLASH_ATTENTION)
    if plan.setup.mode != "full":
        notes.append(f"{plan.setup.mode}: this config sets parallelism, batch and precision; the adapters "
                     f"(rank {plan.setup.lora_rank}) come from PEFT in your training script")
    notes.append("no optimizer section: pass your AdamW to deepspeed.initialize (the plan assumes AdamW)")
    return cfg, notes


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    cfg, own = config(plan)
    body = json.dumps(cfg, indent=2) + "\n"
    return result(FORMAT, "ds_config.json", plan, "DeepSpeed config (deepspeed.initialize(config=...))", body,
                  notes + own, marker=None)
