"""Vectorised results: one numpy array per quantity, one element per plan of a PlanGrid.

`evaluate` turns element i into the frozen pydantic reports of results.py; the search
ranks whole arrays at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class MemoryArrays:
    """Bytes per GPU on the most loaded rank, at the step's peak. Categories add up to `total`."""

    weights: np.ndarray  # incl. ZeRO-3/FSDP gather and prefetch buffers
    gradients: np.ndarray
    optimizer: np.ndarray
    activations: np.ndarray  # incl. logits and loss buffers
    other: np.ndarray  # not model tensors: CUDA context, NCCL buffers, fragmentation
    details: dict[str, np.ndarray] = field(default_factory=dict)  # finer named terms, bytes
    peak_phase: np.ndarray | None = None  # post-training: which phase sets the peak (rollout, policy_training, ...)

    @property
    def total(self) -> np.ndarray:
        return self.weights + self.gradients + self.optimizer + self.activations + self.other


@dataclass(frozen=True)
class TimeArrays:
    """Exposed seconds per optimizer step; the parts add up to `step`."""

    compute: np.ndarray
    tp_comm: np.ndarray
    cp_comm: np.ndarray
    ep_comm: np.ndarray
    pp_bubble: np.ndarray
    pp_comm: np.ndarray
    dp_comm: np.ndarray
    optimizer: np.ndarray
    model_flops_per_step: np.ndarray  # whole cluster, MFU numerator (definition in README)
    hardware_flops_per_step: np.ndarray  # whole cluster, incl. recompute (HFU numerator)
    details: dict[str, np.ndarray] = field(default_factory=dict)
    # Post-training passes outside the policy's training step (0 for plain training).
    rollout: np.ndarray | float = 0.0
    reference: np.ndarray | float = 0.0
    old_logprob: np.ndarray | float = 0.0
    reward: np.ndarray | float = 0.0
    critic: np.ndarray | float = 0.0
    # Megatron-family full training: the optimizer phase beside AdamW's bytes (performance/optimizer_phase.py).
    optimizer_phase: np.ndarray | float = 0.0

    @property
    def training_step(self) -> np.ndarray:
        """The policy's training step alone."""
        return (self.compute + self.tp_comm + self.cp_comm + self.ep_comm + self.pp_bubble
                + self.pp_comm + self.dp_comm + self.optimizer + self.optimizer_phase)

    @property
    def step(self) -> np.ndarray:
        return self.training_step + self.rollout + self.reference + self.old_logprob + self.reward + self.critic
