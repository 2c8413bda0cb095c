"""What DPO, GRPO and PPO add to a GPU's memory (see docs/post_training.md).

At every moment of the step (filed under the policy's categories, named after the model they belong to):
- weights.reference: the frozen reference, forward only, in its own dtype (bf16 by default), split like
  the policy (TP, PP) and sharded over data parallelism where the framework shards parameters (ZeRO-3,
  FSDP; TRL prepares the reference with ZeRO-3 only when the policy uses it, verl's ref worker is FSDP).
  With LoRA/QLoRA the reference is the base with the adapters disabled (TRL `null_ref_context`, verl
  `ref_in_actor`): no memory of its own.
- ppo: weights.reward_model (forward only, like the reference, always a model of its own) and the
  critic's stored states (weights.critic, gradients.critic where they persist between steps,
  optimizer.critic), laid out like the policy's. The critic and reward model are taken to be the
  policy's architecture (verl's critic defaults to the actor's checkpoint); the critic's value head
  (h → 1) is counted as the LM head it replaces, a small overestimate.
Extra moments, offered to the peak search beside the policy's training moments:
- reference_forward: the states at rest plus one micro-batch of the reference's logits
  (REFERENCE_LOGIT_BYTES_PER_LOGIT) — the reference pass runs before the policy's forward (verl; TRL
  with precompute_ref_log_probs); TRL's default runs it after the policy's forward, not modelled.
- rollout (grpo/ppo): the states at rest (gradients only where they persist), plus the inference
  engine's bf16 weights (weights.inference_engine) and the KV cache of the sequences generated at once
  (activations.kv_cache) — verl frees both after the rollout (free_cache_engine), so they are absent
  from the training moments.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.post_training import REFERENCE_LOGIT_BYTES_PER_LOGIT, REFERENCE_WEIGHT_BYTES
from .gradients import gradients_at_rest
from .layouts import dense_shard_group, sharded
from .logits import logits_per_rank
from .optimizer import optimizer_states
from .rank import Rank
from .terms import Terms
from .weights import frozen_base_sharded, weights_at_rest


def _forward_only_model_bytes(rank: Rank, dtype: str) -> np.ndarray:
    share = sharded(np.ones(rank.n), frozen_base_sharded(rank), dense_shard_group(rank.grid))
    return REFERENCE_WEIGHT_BYTES[dtype] * rank.params.total * share


def gradients_persist(rank: Rank) -> np.ndarray:
    """Stored gradients that outlive the optimizer step: Megatron's main-grad buffer, DeepSpeed
    ZeRO-2/3's flat partition; `.grad` and FSDP2 gradients are freed by zero_grad(set_to_none)."""
    framework = rank.setup.framework
    if framework == "megatron":
        return np.ones(rank.n, dtype=bool)
    if framework == "deepspeed":
        return rank.grid.zero_stage >= 2
    return np.zeros(rank.n, dtype=bool)


def post_training_at_rest(rank: Rank) -> Terms:
    """Terms present at every moment of the step, for the rank's candidate pipeline stage."""
    post, terms = rank.setup.post_training, Terms()
    if post is None:
        return terms
    if rank.full_training:
        terms.add("weights", "reference", _forward_only_model_bytes(rank, post.reference_dtype))
    if post.has_critic:
        terms.add("weights", "reward_model", _forward_only_model_bytes(rank, "bf16"))
        terms.add("weights", "critic", sum(weights_at_rest(rank).values()))
        terms.add("optimizer", "critic", sum(optimizer_states(rank).values()))
        persist = gradients_persist(rank)
        terms.add("gradients", "critic", sum(np.where(persist, v, 0.0) if k == "gradients" else v
                                             for k, v in gradients_at_rest(rank).items()))
    return terms


def post_training_moments(rank: Rank, at_rest: Terms, stored_gradients: dict[str, np.ndarray],
                          rollout) -> list[tuple[str, Terms]]:
    """(phase label, terms) of the moments outside the policy's training step."""
    post = rank.setup.post_training
    if post is None:
        return []
    persist = gradients_persist(rank)
    resting = Terms(at_rest.values)
    for name, value in stored_gradients.items():
        resting.add("gradients", name, np.where(persist, value, 0.0) if name == "gradients" else value)
    reference = Terms(resting.values)
    logits = np.where(rank.stage.has_output, logits_per_rank(rank.model, rank.setup, rank.grid), 0.0)
    reference.add("activations", "reference_logits", REFERENCE_LOGIT_BYTES_PER_LOGIT * logits)
    moments = [("reference_forward", reference)]
    if post.generates and rollout is not None:
        generating = Terms(resting.values)
        generating.add("weights", "inference_engine", np.full(rank.n, rollout.inference_weights_bytes))
        generating.add("activations", "kv_cache", np.full(rank.n, rollout.kv_cache_bytes))
        moments.append(("rollout", generating))
    return moments
