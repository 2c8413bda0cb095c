"""Exports of a post-training plan (DPO, GRPO, PPO).

None of the formats shardwise writes is a post-training launcher. Megatron-LM's pretrain_gpt.py,
Megatron-Bridge's pretrain/finetune recipes, torchtitan 0.2 and Nanotron train a language-modelling
loss only: they refuse. DeepSpeed, FSDP2 and Accelerate configs lay out the *policy* the way a
post-training framework built on them runs it, so they are written with a note naming the settings
of that framework — only names read in its source:
- DPO: TRL's DPOTrainer on Accelerate/DeepSpeed/FSDP (trl/trainer/dpo_config.py: `beta`,
  `max_length`, `precompute_ref_log_probs`; the batch knobs are transformers' TrainingArguments
  `per_device_train_batch_size` — pairs, not sequences — and `gradient_accumulation_steps`).
- GRPO/PPO: verl's FSDP backend (verl/trainer/config/ppo_trainer.yaml at 008db456): `data.train_batch_size`
  (prompts), `data.max_prompt_length`, `data.max_response_length`, `actor_rollout_ref.rollout.n`,
  `actor_rollout_ref.rollout.tensor_model_parallel_size`, `actor_rollout_ref.rollout.gpu_memory_utilization`,
  `actor_rollout_ref.actor.ppo_mini_batch_size` (prompts;
  one update per rollout, as shardwise models it), `actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu`, `actor_rollout_ref.model.enable_gradient_checkpointing`,
  `algorithm.adv_estimator`, `trainer.n_gpus_per_node`, `trainer.nnodes`. verl's FSDP actor has no tensor or
  pipeline parallelism, so for TP/PP > 1 the note says so instead of listing settings.
"""

from __future__ import annotations

import math

from ..assumptions.post_training import ROLLOUT_GPU_MEMORY_UTILIZATION
from .plan import ExportPlan
from .result import ExportRefused

NO_POST_TRAINING = {
    "megatron": "Megatron-LM's pretrain_gpt.py",
    "megatron-bridge": "Megatron-Bridge's pretrain/finetune recipes",
    "torchtitan": "torchtitan 0.2",
    "nanotron": "Nanotron",
}


def refuse_unsupported(fmt: str, plan: ExportPlan) -> None:
    post = plan.setup.post_training
    if post is not None and fmt in NO_POST_TRAINING:
        raise ExportRefused(fmt, f"{NO_POST_TRAINING[fmt]} has no {post.algorithm.upper()} mode (no reference model, "
                                 f"rollout or preference loss)",
                            "export deepspeed, fsdp or accelerate for the policy's layout; the note there names the "
                            "TRL (DPO) or verl (GRPO/PPO) settings")


def post_training_notes(plan: ExportPlan) -> list[str]:
    post = plan.setup.post_training
    if post is None:
        return []
    s = plan.strategy
    if post.algorithm == "dpo":
        return [f"DPO: this file lays out the policy; run it with TRL's DPOTrainer: DPOConfig(per_device_train_batch_size="
                f"{s.micro_batch // 2} (pairs), gradient_accumulation_steps={plan.grad_accum}, "
                f"max_length={plan.setup.seq_len}, precompute_ref_log_probs=False, bf16=True"
                + (", gradient_checkpointing=True" if s.recompute == "full" else "")
                + ") — the frozen reference is loaded like the policy"
                + (" (with PEFT: the base with adapters disabled)" if plan.setup.mode != "full" else "")]
    if s.tp > 1 or s.pp > 1 or s.cp > 1:
        return [f"{post.algorithm.upper()}: verl's FSDP actor has no tensor, pipeline or context parallelism; this plan "
                f"(TP={s.tp}, PP={s.pp}, CP={s.cp}) needs verl's Megatron backend, whose settings shardwise does not list"]
    prompts = plan.global_batch / post.group_size
    settings = [f"algorithm.adv_estimator={'grpo' if post.algorithm == 'grpo' else 'gae'}",
                f"data.train_batch_size={math.floor(prompts)}",
                f"actor_rollout_ref.actor.ppo_mini_batch_size={math.floor(prompts)}",  # one policy update per rollout
                f"data.max_prompt_length={post.prompt_len}",
                f"data.max_response_length={post.response_len}", f"actor_rollout_ref.rollout.n={post.group_size}",
                f"actor_rollout_ref.rollout.tensor_model_parallel_size={post.inference_tp}",
                f"actor_rollout_ref.rollout.gpu_memory_utilization={ROLLOUT_GPU_MEMORY_UTILIZATION}",
                f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={s.micro_batch}",
                f"actor_rollout_ref.model.enable_gradient_checkpointing={s.recompute != 'none'}",
                f"trainer.n_gpus_per_node={plan.cluster.gpus_per_node}", f"trainer.nnodes={plan.nodes}"]
    note = (f"{post.algorithm.upper()}: this file lays out the policy; verl (FSDP backend, co-located) runs the step "
            f"with: {' '.join(settings)}")
    if prompts != math.floor(prompts):
        note += f" (the global batch {plan.global_batch} is not a multiple of the group size {post.group_size})"
    return [note]
