"""torchtitan: a TOML job file for the 0.2 series (0.2.2 is the last release that reads TOML)
and, in its comments, the command-line overrides the 0.3 series accepts (`--module/--config`
Python configurations plus `--section.option` flags).

Plan -> torchtitan (0.2.2 torchtitan/config/job_config.py):
- DP: HSDP replicas -> data_parallel_replicate_degree, DP/replicas -> data_parallel_shard_degree;
  ZeRO-3 -> fsdp_reshard_after_forward "always", ZeRO-2 -> "never"; ZeRO-0 -> DDP (replicate only).
- PP: pipeline_parallel_degree, schedule 1F1B or Interleaved1F1B (VPP > 1) with
  pipeline_parallel_layers_per_stage = layers/(PP·VPP); the embedding/output weights are set to 0
  so the layers split as the plan assumes. Micro-batches: local_batch_size = micro-batch·grad-accum,
  pipeline_parallel_microbatch_size = micro-batch.
- Without PP: local_batch_size = micro-batch and global_batch_size = micro-batch·grad-accum·DP
  (torchtitan derives grad-accum = global / (local·DP), train.py).
- activation_checkpoint.mode: full, or none for "selective" (see common.SELECTIVE_AS_FLASH_ATTENTION).
- bf16: mixed_precision_param = "bfloat16"; fp8: model.converters = ["quantize.linear.float8"].

Refused: LoRA/QLoRA (no adapters in 0.2), ZeRO-0 (DDP) together with TP/PP/CP/EP ("DDP has not
supported > 1D parallelism", models/llama3/infra/parallelize.py), an expert mesh that does not
tile (efsdp = dp_shard·CP·TP/(ETP·EP), distributed/parallel_dims.py).
"""

from __future__ import annotations

import re

import tomli_w

from . import defaults
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .plan import ExportPlan
from ..setting_text import settings_text
from ..training import MODE_WRITTEN
from .result import ExportRefused, ExportResult

FORMAT = "torchtitan"
FAMILY = "fsdp"

# Catalog models torchtitan ships (torchtitan/models/*/__init__.py flavors in 0.2.2;
# models/*/config_registry.py functions in 0.3.0).
KNOWN_MODELS: dict[str, tuple[str, str, str | None]] = {
    "llama-3-8b": ("llama3", "8B", "llama3_8b"),
    "llama-3.1-8b": ("llama3", "8B", "llama3_8b"),
    "llama-3-70b": ("llama3", "70B", "llama3_70b"),
    "llama-3.1-70b": ("llama3", "70B", "llama3_70b"),
    "llama-3.3-70b": ("llama3", "70B", "llama3_70b"),
    "llama-3.1-405b": ("llama3", "405B", "llama3_405b"),
    "qwen3-0.6b": ("qwen3", "0.6B", "qwen3_0_6b"),
    "qwen3-1.7b": ("qwen3", "1.7B", "qwen3_1_7b"),
    "qwen3-4b": ("qwen3", "4B", None),
    "qwen3-8b": ("qwen3", "8B", None),
    "qwen3-14b": ("qwen3", "14B", "qwen3_14b"),
    "qwen3-32b": ("qwen3", "32B", "qwen3_32b"),
    "qwen3-30b-a3b": ("qwen3", "30B-A3B", "qwen3_30b_a3b"),
    "qwen3-235b-a22b": ("qwen3", "235B-A22B", None),
    "deepseek-v2-lite": ("deepseek_v3", "16B", "deepseek_v3_16b"),
    "deepseek-v2": ("deepseek_v3", "236B", None),
    "deepseek-v3": ("deepseek_v3", "671B", "deepseek_v3_671b"),
}


# tyro spells a boolean field as a flag and its negation (0.3.0 config/configs.py,
# ParallelismConfig.enable_sequence_parallel, default True).
SP_FLAG = "--parallelism.enable_sequence_parallel"
NO_SP_FLAG = "--parallelism.no-enable_sequence_parallel"


def model_key(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")


def model_choice(plan: ExportPlan) -> tuple[str, str, str | None, list[str]]:
    """(0.2 model.name, 0.2 flavor, 0.3 config function or None, notes)."""
    known = KNOWN_MODELS.get(model_key(plan.model.name))
    if known:
        return (*known, [])
    family = "deepseek_v3" if plan.model.mla else "qwen3" if plan.model.is_moe else "llama3"
    return family, "CUSTOM", None, [
        f"torchtitan ships no flavor for {plan.model.name}: register one with its dimensions "
        f"(hidden {plan.model.hidden_size}, {plan.model.num_layers} layers, {plan.model.num_attention_heads} heads) "
        f"under model.flavor = \"CUSTOM\""]


def refuse_unexpressible(plan: ExportPlan) -> None:
    s = plan.strategy
    if plan.setup.mode != "full":
        # Megatron-Bridge has LoRA but no 4-bit QLoRA (megatron_bridge.py refuses it): name only formats that write it.
        others = "megatron-bridge/accelerate" if plan.setup.mode == "lora" else "accelerate/deepspeed/fsdp"
        raise ExportRefused(FORMAT, f"torchtitan 0.2 trains no {MODE_WRITTEN[plan.setup.mode]} adapters",
                            settings_text("use {mode} full, or export {format} " + others, "mode", "format"))
    if s.zero_stage == 0 and plan.dp > 1 and (s.tp > 1 or s.pp > 1 or s.cp > 1 or s.ep > 1):
        raise ExportRefused(FORMAT, "torchtitan applies DDP (ZeRO-0) only when data parallelism is the only "
                                    "parallelism (\"DDP has not supported > 1D parallelism\")",
                            "use ZeRO-2 (fsdp_reshard_after_forward = \"never\") or ZeRO-3")
    expert_ranks = plan.dp_shard * s.cp * s.tp
    if s.ep > 1 and expert_ranks % (s.ep * s.etp):
        raise ExportRefused(FORMAT, f"torchtitan places experts on the dp_shard·CP·TP = {expert_ranks} ranks of a "
                                    f"replica, which EP·ETP = {s.ep * s.etp} does not divide",
                            "choose EP·ETP dividing dp_shard·CP·TP")


def batch_settings(plan: ExportPlan) -> tuple[int, int]:
    """(local_batch_size, global_batch_size) as torchtitan counts them."""
    mb = plan.strategy.micro_batch
    local = mb * plan.grad_accum if plan.strategy.pp > 1 else mb
    return local, plan.global_batch


def reshard_policy(plan: ExportPlan) -> str:
    return "always" if plan.strategy.zero_stage == 3 else "never"


def data_parallel_degrees(plan: ExportPlan) -> tuple[int, int]:
    """(replicate, shard): DDP when ZeRO-0, HSDP when replicas > 1, FSDP otherwise."""
    if plan.strategy.zero_stage == 0:
        return plan.dp, 1
    return plan.strategy.hsdp_replicas, plan.dp_shard


def pipeline_settings(plan: ExportPlan) -> dict:
    s = plan.strategy
    if s.pp == 1:
        return {}
    out = {"pipeline_parallel_degree": s.pp,
           "pipeline_parallel_schedule": "Interleaved1F1B" if s.vpp > 1 else "1F1B",
           "pipeline_parallel_microbatch_size": s.micro_batch,
           "pipeline_parallel_first_stage_less_layers": 0,
           "pipeline_parallel_last_stage_less_layers": 0}
    if s.vpp > 1:
        layers = plan.model.num_layers
        if layers % (s.pp * s.vpp):
            raise ExportRefused(FORMAT, f"PP·VPP = {s.pp * s.vpp} virtual stages do not split {layers} layers evenly",
                                "choose VPP so that PP·VPP divides the layers")
        out["pipeline_parallel_layers_per_stage"] = layers // (s.pp * s.vpp)
    return out


def job_config(plan: ExportPlan) -> tuple[dict, list[str]]:
    """The 0.2.2 job config as a dict of TOML sections, and notes."""
    refuse_unexpressible(plan)
    s = plan.strategy
    name, flavor, _, notes = model_choice(plan)
    local, global_batch = batch_settings(plan)
    replicate, shard = data_parallel_degrees(plan)
    parallelism = {"data_parallel_replicate_degree": replicate, "data_parallel_shard_degree": shard,
                   "fsdp_reshard_after_forward": reshard_policy(plan), "tensor_parallel_degree": s.tp,
                   "context_parallel_degree": s.cp, "expert_parallel_degree": s.ep,
                   "expert_tensor_parallel_degree": s.etp, "pipeline_parallel_degree": s.pp}
    parallelism.update(pipeline_settings(plan))
    if plan.model.is_moe and s.ep > 1 and plan.setup.moe_dispatcher == "deepep":  # 0.2.2 job_config.py
        parallelism["expert_parallel_comm_backend"] = "deepep"
        notes.append("the plan was priced with DeepEP: expert_parallel_comm_backend = \"deepep\" (torchtitan calls "
                     "it experimental; needs the DeepEP package, github.com/deepseek-ai/DeepEP)")
    model = {"name": name, "flavor": flavor, "hf_assets_path": f"./assets/hf/{plan.model.name}"}
    config = {
        "job": {"description": f"shardwise plan: {s.label()}"},
        "model": model,
        "training": {"local_batch_size": local, "global_batch_size": global_batch, "seq_len": plan.setup.seq_len,
                     "mixed_precision_param": "bfloat16", "mixed_precision_reduce": "float32",
                     "max_norm": defaults.GRADIENT_CLIP_NORM, "steps": defaults.PLACEHOLDER_TRAIN_STEPS},
        "parallelism": parallelism,
        "activation_checkpoint": {"mode": "full" if s.recompute == "full" else "none"},
    }
    if s.recompute == "selective":
        notes.append(SELECTIVE_AS_FLASH_ATTENTION + "; torchtitan's own mode = \"selective\" is per-op "
                     "checkpointing, a different policy")
    if plan.setup.precision == "fp8":
        model["converters"] = ["quantize.linear.float8"]
        config["quantize"] = {"linear": {"float8": {"recipe_name": "tensorwise",
                                                    "enable_fsdp_float8_all_gather": True,
                                                    "precompute_float8_dynamic_scale_for_fsdp": True,
                                                    "filter_fqns": ["output"]}}}
        config["compile"] = {"enable": True, "components": ["model", "loss"]}
        notes.append("fp8: torchao float8 (tensorwise) on the linear layers, compiled; the output layer stays bf16")
    if s.tp > 1 and not plan.sp:
        notes.append("torchtitan 0.2 always uses sequence parallelism with TP (the plan has it off): activations "
                     "take less memory than planned")
    return config, notes


def v03_command(plan: ExportPlan) -> tuple[list[str] | None, list[str]]:
    """torchtitan 0.3 `python -m torchtitan.train` arguments, or None when 0.3 cannot say the plan."""
    s = plan.strategy
    _, _, function, notes = model_choice(plan)
    if s.etp > 1:
        return None, ["torchtitan 0.3 has no expert tensor parallel degree (experts borrow FSDP·TP ranks with "
                      "ETP = 1); this plan needs the 0.2 TOML above"]
    module = {"llama3": "llama3", "qwen3": "qwen3", "deepseek_v3": "deepseek_v3"}[model_choice(plan)[0]]
    local, global_batch = batch_settings(plan)
    replicate, shard = data_parallel_degrees(plan)
    args = ["--module", module, "--config", function or f"{module}_<your_config>",
            "--training.local_batch_size", str(local), "--training.global_batch_size", str(global_batch),
            "--training.seq_len", str(plan.setup.seq_len), "--training.mixed_precision_param", "bfloat16",
            "--parallelism.data_parallel_replicate_degree", str(replicate),
            "--parallelism.data_parallel_shard_degree", str(shard),
            "--parallelism.fsdp_reshard_after_forward", reshard_policy(plan),
            "--parallelism.tensor_parallel_degree", str(s.tp),
            *([SP_FLAG if plan.sp else NO_SP_FLAG] if s.tp > 1 else []),
            "--parallelism.context_parallel_degree", str(s.cp),
            "--parallelism.expert_parallel_degree", str(s.ep),
            "--parallelism.pipeline_parallel_degree", str(s.pp)]
    for key, value in pipeline_settings(plan).items():
        if key != "pipeline_parallel_degree":
            args += [f"--parallelism.{key}", str(value)]
    args.append("activation-checkpoint:full" if s.recompute == "full" else "activation-checkpoint:none")
    if function is None:
        notes = notes + [f"torchtitan 0.3 has no configuration function for {plan.model.name}: write one "
                         f"returning Trainer.Config and pass it with --config"]
    if plan.setup.precision == "fp8":
        notes = notes + ["torchtitan 0.3 sets float8 in the configuration function (model converters), not by flag"]
    return args, notes


def render_v03(plan: ExportPlan) -> str:
    args, notes = v03_command(plan)
    lines = ["", "torchtitan 0.3+ reads no TOML: the same plan as command-line overrides of a Python configuration"]
    if args is None:
        return "".join(f"# {line}".rstrip() + "\n" for line in lines + notes)
    flags = []
    i = 0
    while i < len(args):
        takes_value = i + 1 < len(args) and not args[i + 1].startswith("--") and args[i].startswith("--")
        flags.append(f"{args[i]} {args[i + 1]}" if takes_value else args[i])
        i += 2 if takes_value else 1
    lines.append("torchrun --nnodes=$NNODES --nproc-per-node=$NPROC_PER_NODE -m torchtitan.train \\")
    lines += [f"    {flag} \\" for flag in flags[:-1]] + [f"    {flags[-1]}"]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines + [f"NOTE: {n}" for n in notes])


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    config, own = job_config(plan)
    body = tomli_w.dumps(config) + render_v03(plan)
    return result(FORMAT, "torchtitan.toml", plan, "torchtitan job config (0.2: --job.config_file; 0.3+: flags below)",
                  body, notes + own)
