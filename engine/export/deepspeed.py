"""DeepSpeed JSON config (DeepSpeed 0.19: `deepspeed.runtime.config.DeepSpeedConfig`).

Every key written is one DeepSpeedConfig reads (DeepSpeed ignores unknown top-level keys, so
a comment key or a typo would load silently; tests/engine/export/test_deepspeed.py records
the keys DeepSpeedConfig looks up). The header therefore lives outside the JSON.

What DeepSpeed alone cannot express (FP8, HSDP, PP with TP/EP/CP, ETP > 1, TP with CP, EP with CP
under ZeRO-3) is refused through the same named limits the search applies to `--framework deepspeed`
(engine/validity/deepspeed_config.py `LIMITS`, with their sources), in the same words.
"""

from __future__ import annotations

import json

from ..strategy import Strategy
from ..training import TrainingSetup
from ..validity import deepspeed_config
from . import defaults
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .plan import ExportPlan
from .result import ExportRefused, ExportResult

FORMAT = "deepspeed"
FAMILY = "deepspeed"


def refuse_unexpressible(setup: TrainingSetup, strategy: Strategy) -> None:
    """Refuse a plan breaking one of DeepSpeed's limits, whatever framework it was planned for.

    export_plan calls this before the plan is re-checked under DeepSpeed, so the refusal names the
    limit itself (rule "fp8", "tp_with_ulysses_cp", ...) rather than the search rule that groups it."""
    limit = deepspeed_config.refusal(setup, strategy)
    if limit is not None:
        raise ExportRefused(FORMAT, limit.reason(strategy), limit.fix(strategy), rule=limit.name)


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
    refuse_unexpressible(plan.setup, plan.strategy)
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
                     f"all {plan.cluster.num_gpus} ranks and rejects the batch. AutoTP shards the linear layers "
                     f"only (no Megatron sequence parallelism: the limit megatron_sequence_parallel refuses it)")
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
