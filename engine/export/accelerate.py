"""Hugging Face Accelerate config YAML (`accelerate launch --config_file ...`, Accelerate 1.x).

Plugin by plan:
- PP or EP, or TP/CP with ZeRO 0/1 -> Megatron-LM plugin (distributed_type MEGATRON_LM);
- ZeRO-2/3 -> FSDP2 (fsdp_version 2), with parallelism_config for TP, CP and HSDP;
- data-parallel ZeRO-1 -> DeepSpeed plugin; data-parallel ZeRO-0 -> MULTI_GPU (DDP).

Every degree is written out: the Megatron-LM plugin silently uses context_parallel_size = 2
when the YAML leaves it out (accelerate/utils/dataclasses.py, MegatronLMPlugin.__post_init__,
default of MEGATRON_LM_CONTEXT_PARALLEL_SIZE), and recompute_granularity = "full" /
recompute_method = "uniform" likewise — so with that plugin only full recompute can be said
("selective" needs recompute_method unset, which Megatron-LM asserts, and "none" needs
recompute_granularity unset; both come back as the defaults) and those plans are refused.
Refused too: VPP (the launcher has no virtual-pipeline option), ZeRO-2/3 with PP or EP, HSDP
outside FSDP2, FP8 outside FSDP2.
"""

from __future__ import annotations

import yaml

from . import defaults, launch
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .plan import ExportPlan
from ..setting_text import settings_text
from .result import ExportRefused, ExportResult
from ..strategy import Strategy

FORMAT = "accelerate"


def plugin_for(s: Strategy) -> str:
    if s.pp > 1 or s.ep > 1:
        return "megatron"
    if s.zero_stage >= 2:
        return "fsdp"
    if s.tp > 1 or s.cp > 1:
        return "megatron"
    return "deepspeed" if s.zero_stage == 1 else "multi_gpu"


def family_for(s: Strategy) -> str:
    return {"megatron": "megatron", "fsdp": "fsdp", "deepspeed": "deepspeed", "multi_gpu": "fsdp"}[plugin_for(s)]


def megatron_section(plan: ExportPlan) -> dict:
    s = plan.strategy
    if s.zero_stage >= 2:
        raise ExportRefused(FORMAT, f"ZeRO-{s.zero_stage} with PP/EP needs Megatron-FSDP, which Accelerate's "
                                    f"Megatron-LM plugin does not configure",
                            settings_text("use ZeRO-1 (distributed optimizer), or export {format} megatron", "format"))
    if s.vpp > 1:
        raise ExportRefused(FORMAT, f"Accelerate's launcher has no virtual-pipeline option (VPP={s.vpp})",
                            settings_text("use VPP=1, or export {format} megatron", "format"))
    if s.recompute != "full":
        raise ExportRefused(FORMAT, f"Accelerate's Megatron-LM plugin cannot express recompute '{s.recompute}': an "
                                    f"unset recompute_granularity / recompute_method comes back as 'full' / 'uniform' "
                                    f"(MegatronLMPlugin defaults), and Megatron-LM rejects a method with selective",
                            settings_text("use {recompute} full, or export {format} megatron", "recompute", "format"))
    if plan.setup.precision == "fp8":
        raise ExportRefused(FORMAT, "Accelerate's Megatron-LM plugin sets bf16/fp16 only",
                            settings_text("use {precision} bf16, or export {format} megatron", "precision", "format"))
    return {
        "megatron_lm_tp_degree": s.tp,
        "megatron_lm_pp_degree": s.pp,
        "megatron_lm_context_parallel_size": s.cp,
        "megatron_lm_expert_model_parallel_size": s.ep,
        "megatron_lm_expert_tensor_parallel_size": s.etp,
        "megatron_lm_sequence_parallelism": plan.sp,
        "megatron_lm_num_micro_batches": plan.grad_accum,
        "megatron_lm_use_distributed_optimizer": s.zero_stage == 1,
        "megatron_lm_recompute_granularity": "full",
        "megatron_lm_recompute_method": "uniform",
        "megatron_lm_recompute_num_layers": 1,
        "megatron_lm_gradient_clipping": defaults.GRADIENT_CLIP_NORM,
    }


def fsdp_sections(plan: ExportPlan) -> tuple[dict, dict]:
    s = plan.strategy
    fsdp = {
        "fsdp_version": 2,
        "fsdp_reshard_after_forward": s.zero_stage == 3,
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_cpu_ram_efficient_loading": True,
        "fsdp_offload_params": False,
        "fsdp_activation_checkpointing": s.recompute == "full",
    }
    parallelism = {}
    if s.tp > 1 or s.cp > 1 or s.hsdp_replicas > 1:
        parallelism = {"parallelism_config_dp_replicate_size": s.hsdp_replicas,
                       "parallelism_config_dp_shard_size": plan.dp_shard,
                       "parallelism_config_tp_size": s.tp,
                       "parallelism_config_cp_size": s.cp}
    return fsdp, parallelism


def deepspeed_section(plan: ExportPlan) -> dict:
    if plan.setup.precision == "fp8":
        raise ExportRefused(FORMAT, "DeepSpeed has no FP8 training switch",
                            settings_text("use ZeRO-2/3 (FSDP2) or {precision} bf16", "precision"))
    return {"zero_stage": plan.strategy.zero_stage, "gradient_accumulation_steps": plan.grad_accum,
            "gradient_clipping": defaults.GRADIENT_CLIP_NORM, "offload_optimizer_device": "none",
            "offload_param_device": "none", "zero3_init_flag": False}


def config(plan: ExportPlan) -> tuple[dict, list[str]]:
    s = plan.strategy
    hosts, _, notes = launch.counts(plan, FORMAT)
    plugin = plugin_for(s)
    cfg: dict = {"compute_environment": "LOCAL_MACHINE", "debug": False}
    if plugin == "megatron":
        cfg.update(distributed_type="MEGATRON_LM", megatron_lm_config=megatron_section(plan))
        notes.append(f"Megatron-LM plugin: micro-batch = your DataLoader batch_size ({s.micro_batch}); "
                     f"{plan.grad_accum} micro-batches per step come from megatron_lm_num_micro_batches")
    elif plugin == "fsdp":
        fsdp, parallelism = fsdp_sections(plan)
        cfg.update(distributed_type="FSDP", fsdp_config=fsdp)
        if parallelism:
            cfg["parallelism_config"] = parallelism
        if s.tp > 1:
            notes.append(f"TP={s.tp}: load the model with tp_plan=\"auto\" (Transformers' tensor-parallel plan)")
        if s.recompute == "selective":
            notes.append(SELECTIVE_AS_FLASH_ATTENTION)
    elif plugin == "deepspeed":
        cfg.update(distributed_type="DEEPSPEED", deepspeed_config=deepspeed_section(plan))
    else:
        cfg.update(distributed_type="MULTI_GPU")
    if plugin in ("fsdp", "multi_gpu", "deepspeed"):
        notes.append(f"per-GPU batch = your DataLoader batch_size ({s.micro_batch}); Accelerator("
                     f"gradient_accumulation_steps={plan.grad_accum})" if plugin != "deepspeed" else
                     f"per-GPU batch = your DataLoader batch_size ({s.micro_batch})")
        if plugin != "fsdp" and s.recompute == "full":
            notes.append("recompute 'full': call model.gradient_checkpointing_enable()")
        elif plugin != "fsdp" and s.recompute == "selective":
            notes.append(SELECTIVE_AS_FLASH_ATTENTION)
    if plan.setup.precision == "fp8":
        cfg["mixed_precision"] = "fp8"
        cfg["fp8_config"] = {"backend": "AO", "enable_fsdp_float8_all_gather": True}
        notes.append("fp8 through torchao float8 (backend AO) on the linear layers")
    else:
        cfg["mixed_precision"] = "bf16"
    cfg.update(num_machines=hosts, num_processes=plan.cluster.num_gpus, machine_rank=0,
               main_process_port=defaults.RDZV_PORT, rdzv_backend="static", same_network=True, use_cpu=False)
    if hosts > 1:
        cfg["main_process_ip"] = "MAIN_HOST_IP"
        notes.append("set main_process_ip to the first host and machine_rank per host (0.."
                     f"{hosts - 1})")
    if plan.setup.mode != "full":
        notes.append(f"{plan.setup.mode}: wrap the model with PEFT (rank {plan.setup.lora_rank}) before "
                     f"accelerator.prepare()")
    return cfg, notes


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    cfg, own = config(plan)
    body = yaml.safe_dump(cfg, sort_keys=False)
    return result(FORMAT, "accelerate_config.yaml", plan, "Accelerate config (accelerate launch --config_file)",
                  body, notes + own)
