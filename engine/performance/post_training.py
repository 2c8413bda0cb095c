"""Seconds a DPO, GRPO or PPO step spends outside the policy's training step (docs/post_training.md).

Forward-only passes (reference, the policy's own log-probs, reward model, critic values) run over
the step's global batch with the training plan's layout: per micro-batch, the busiest pipeline stage's
layers forward plus the forward's share of the exchanges inside them (2 of the TP all-reduces per
layer, half of CP's and EP's), the embedding's and the logit layer's forward; a forward-only
pipeline of m micro-batches takes (m + PP − 1) of them (fill and drain, no backward to overlap).

Per step:
- dpo:  reference_s (one forward of the reference).
- grpo: rollout_s (generation, post_training/rollout.py) + old_logprob_s (verl recomputes the
        policy's log-probs of the rollout with a forward pass) + reference_s.
- ppo:  as grpo, + reward_s (the reward model's forward) + critic_s (the critic's value forward and
        its training step, taken equal to the policy's training step with the same plan).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..arrays import TimeArrays
from ..assumptions import compute as c
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..flops import forward_flops_per_token
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, PlanGrid
from ..training import TrainingSetup
from .compute import microbatch_compute
from .cp import cp_time_per_layer
from .ep import ep_time_per_moe_layer
from .tp import ALL_REDUCES_PER_LAYER_BWD, ALL_REDUCES_PER_LAYER_FWD, tp_time_per_layer


def forward_pass_time(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
                      assume: PerformanceAssumptions) -> np.ndarray:
    """Seconds for one forward-only pass over the step's global batch, with the plan's layout."""
    mb = microbatch_compute(model, cluster, setup, grid, assume)
    L = model.num_layers
    tp_layer, tp_ends = tp_time_per_layer(model, cluster, setup, grid, mb.tokens, assume)
    all_reduces = ALL_REDUCES_PER_LAYER_FWD + ALL_REDUCES_PER_LAYER_BWD + np.where(
        grid.recompute == RECOMPUTE_FULL, ALL_REDUCES_PER_LAYER_FWD, 0)
    tp_forward = tp_layer * ALL_REDUCES_PER_LAYER_FWD / all_reduces
    cp_layer = cp_time_per_layer(model, cluster, grid, mb.tokens, mb.dense_layer.attention_forward, assume,
                                 setup.cp_comm_type)
    moe_window = mb.moe_layer.total if mb.moe_layer is not None else None  # as step.py prices it
    ep_layer = ep_time_per_moe_layer(model, cluster, setup, grid, mb.tokens, assume, moe_window) * (
        model.num_moe_layers / L)
    per_layer = mb.layer_mix(model, "forward") + tp_forward + 0.5 * (cp_layer + ep_layer)
    backward_gemms = (c.FROZEN_BACKWARD_GEMMS_PER_FORWARD_GEMM if setup.mode != "full"
                      else c.BACKWARD_GEMMS_PER_FORWARD_GEMM)
    ends = (mb.logits + mb.embedding) / (1 + backward_gemms) + tp_ends / 2
    stage_layers = np.ceil(L / grid.pp)
    per_microbatch = stage_layers * per_layer + ends
    return (grid.num_microbatches + grid.pp - 1) * per_microbatch


def add_post_training(times: TimeArrays, model: ModelSpec, cluster: Cluster, setup: TrainingSetup,
                      grid: PlanGrid, assume: PerformanceAssumptions) -> TimeArrays:
    """The policy's step `times` with the post-training passes added (a no-op without post-training)."""
    post = setup.post_training
    if post is None:
        return times
    n = len(grid)
    forward = forward_pass_time(model, cluster, setup, grid, assume)
    tokens = float(setup.global_batch * setup.seq_len)
    forward_flops = forward_flops_per_token(model, setup.seq_len) * tokens
    passes = {"reference": forward}
    extra_flops = forward_flops
    if post.generates:
        from ..post_training.rollout import rollout

        generation = rollout(model, cluster, post, setup.global_batch)
        passes["rollout"] = np.full(n, generation.time_s)
        passes["old_logprob"] = forward
        extra_flops = extra_flops + forward_flops + generation.flops_per_gpu * cluster.num_gpus
    if post.has_critic:
        passes["reward"] = forward
        passes["critic"] = forward + times.step
        extra_flops = extra_flops + 2 * forward_flops
        critic_flops = times.model_flops_per_step
        critic_hw = times.hardware_flops_per_step
    else:
        critic_flops = critic_hw = 0.0
    return replace(times, **passes,
                   model_flops_per_step=times.model_flops_per_step + extra_flops + critic_flops,
                   hardware_flops_per_step=times.hardware_flops_per_step + extra_flops + critic_hw)
