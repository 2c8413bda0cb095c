"""Logits and loss buffers on the last pipeline stage.

The output layer produces micro_batch · seq/CP × vocab/TP logits per rank (Megatron gathers the
sequence-parallel hidden states first and keeps the vocabulary split: vocab-parallel cross-entropy;
torchtitan's loss_parallel does the same). What the loss keeps depends on its implementation:
- eager PyTorch, `F.cross_entropy(logits.float(), labels)` (fsdp = torchtitan; deepspeed = HF models):
  12 bytes per logit at the start of backward (fp32 log-softmax output, its incoming gradient and the
  gradient it produces); torchtitan with TP runs it under `loss_parallel`, whose backward holds four
  fp32 logit-sized tensors: 16 bytes;
- nanotron `sharded_cross_entropy(..., dtype=float)`: 10 bytes per logit (bf16 logits, fp32 copy,
  fp32 softmax);
- Megatron `vocab_parallel_cross_entropy`: 6 bytes per logit (bf16 logits + fp32 softmax computed
  in place; the backward reuses the softmax buffer for the gradient).
For a 128K–256K vocabulary this can exceed all other activations of the stage.

Besides, the last stage keeps the final norm's input and output (the output layer's input) for each
micro-batch in flight.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import (BF16_BYTES, EAGER_CROSS_ENTROPY_BYTES_PER_LOGIT,
                                  LAYERNORM_STATS_BYTES, LOSS_PARALLEL_CROSS_ENTROPY_BYTES_PER_LOGIT,
                                  MEGATRON_CROSS_ENTROPY_BYTES_PER_LOGIT, NANOTRON_CROSS_ENTROPY_BYTES_PER_LOGIT,
                                  RMSNORM_STATS_BYTES)
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..training import TrainingSetup
from .activations import linear_input_divisor, sp_divisor, tokens_per_microbatch


def cross_entropy_bytes_per_logit(setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    n = len(grid)
    if setup.framework == "megatron":
        return np.full(n, float(MEGATRON_CROSS_ENTROPY_BYTES_PER_LOGIT))
    if setup.framework == "nanotron":
        return np.full(n, float(NANOTRON_CROSS_ENTROPY_BYTES_PER_LOGIT))
    if setup.framework == "fsdp":
        return np.where(grid.tp > 1, LOSS_PARALLEL_CROSS_ENTROPY_BYTES_PER_LOGIT,
                        EAGER_CROSS_ENTROPY_BYTES_PER_LOGIT).astype(float)
    return np.full(n, float(EAGER_CROSS_ENTROPY_BYTES_PER_LOGIT))


def logits_per_rank(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    return tokens_per_microbatch(setup, grid) * model.vocab_size / grid.tp


def loss_buffer_bytes(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """Logits and cross-entropy buffers of one micro-batch at their peak."""
    return logits_per_rank(model, setup, grid) * cross_entropy_bytes_per_logit(setup, grid)


def final_norm_bytes(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """Final norm input and output (the output layer's input), per micro-batch."""
    stats = LAYERNORM_STATS_BYTES if model.norm == "layernorm" else RMSNORM_STATS_BYTES
    norm_input = (BF16_BYTES * model.hidden_size + stats) / sp_divisor(grid)
    output_layer_input = BF16_BYTES * model.hidden_size / linear_input_divisor(setup, grid)
    return tokens_per_microbatch(setup, grid) * (norm_input + output_layer_input)
