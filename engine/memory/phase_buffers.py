"""Gathered (unsharded) weights and unsharded-gradient buffers that exist only at some phases of the
step (rank.PHASES), by framework flavour. Gathered weights are in the compute dtype (bf16; the frozen
base's own size under LoRA/QLoRA); they count as weights, the gradient buffers as gradients.

fsdp = FSDP2 as torchtitan 0.2.2 applies it (units: embedding, each block, [norm, output], root):
- ZeRO-3 (reshard after forward): at the loss only the [norm, output] unit is gathered (torchtitan
  does not reshard it after forward); in a block's backward, that block and the unit FSDP2 prefetches
  next (the previous block, or the embedding after the first block); at the embedding's backward the
  embedding. ZeRO-1/2, and any PP > 1 (torchtitan's default policy), never reshard after forward:
  the whole stage is gathered at the loss.
- Gradients (reduce_dtype=fp32): a block's backward writes unsharded bf16 gradients (the first one
  out, early in the backward, is the largest matrix, fc2); its post-backward copies them into an fp32
  reduce-scatter input of the block's full size, which FSDP2 keeps alive until the next unit's
  post-backward (`reduce_scatter_max_input_buffers` = 1): while a block is back-propagated, the
  previous block's fp32 input is alive. (The tracker shows it for most blocks; we count it for all.)
- With PP > 1, torch.distributed.pipelining disables gradient sync and resharding for every backward
  but the last: the stage stays gathered and its gradients accumulate unsharded in fp32.
- ZeRO-0 is DDP under autocast: bf16 weight copies cached by autocast for backward.
megatron: ZeRO-3 is Megatron-FSDP with per-layer units (current + prefetched layer gathered) and one
layer's fp32 main gradients being reduced; ZeRO-2 keeps that fp32 bucket; ZeRO-0/1 accumulate
weight gradients straight into main_grad (gradient_accumulation_fusion) except the embedding's,
a bf16 temporary of the table.
deepspeed: ZeRO-3 holds the module running plus up to stage3_prefetch_bucket_size elements
prefetched; at the loss also the last layer, kept because it is reused at once (its reuse distance
is below stage3_max_reuse_distance). Eager accumulation makes each new weight gradient a temporary
of the weight's size before it is added into .grad — the embedding's (a dense table) counts; a
layer's weights' are freed before the MLP's activation gradients peak, so they do not.
nanotron: nothing gathered; the bf16 `.grad` of every parameter back-propagated so far in this
micro-batch (freed after the backward, once added into the fp32 accumulator).
QLoRA dequantises the NF4 matrix being multiplied into a bf16 temporary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions.memory import (BF16_BYTES, DEEPSPEED_PREFETCH_BUCKET_ELEMENTS, FP32_BYTES,
                                  FSDP_REDUCE_SCATTER_INPUTS_IN_FLIGHT, MEGATRON_FSDP_UNITS_GATHERED,
                                  MEGATRON_MAIN_GRAD_BYTES, NANOTRON_HALF_GRAD_BYTES)
from .layouts import dense_shard_group, expert_shard_group
from .lora import frozen_base_bytes
from .rank import Rank


@dataclass(frozen=True)
class PhaseBuffers:
    gathered_weights: np.ndarray  # bytes
    gradient_buffers: np.ndarray  # bytes


def _gathered_bytes_per_param(rank: Rank) -> np.ndarray:
    if rank.full_training:
        return np.full(rank.n, float(BF16_BYTES))
    p = rank.params
    return frozen_base_bytes(rank.setup, p.gemm, p.total) / np.maximum(p.total, 1.0)


def _fsdp(rank: Rank, phase: str) -> tuple[np.ndarray, np.ndarray]:
    """(gathered elements, gradient-buffer bytes) for FSDP2; ZeRO-0 is DDP under autocast."""
    p, grid = rank.params, rank.grid
    block, out, emb, fc2 = p.largest_layer, p.output, p.embedding, p.largest_gemm
    reshards = (grid.zero_stage >= 3) & (grid.pp == 1)
    if phase == "loss":
        gathered, rs_input = np.where(reshards, out, p.total), 0.0
    elif phase.startswith("last_layer"):
        gathered, rs_input = np.where(reshards, 2 * block, p.total - out), block
    elif phase.startswith("first_layer"):  # the embedding is what FSDP prefetches next
        gathered, rs_input = block + np.where(reshards, np.maximum(block, emb), emb), block
    else:  # embedding_backward
        gathered, rs_input = emb, np.maximum(emb, block)
    if phase == "loss":
        fresh = 0.0
    elif phase.endswith("_end"):
        fresh = BF16_BYTES * block  # the layer's unsharded gradients, complete
    elif phase == "embedding_backward":
        fresh = BF16_BYTES * emb
    else:
        fresh = BF16_BYTES * fc2  # the first gradient out of the layer's backward (fc2)
    grads = FSDP_REDUCE_SCATTER_INPUTS_IN_FLIGHT * FP32_BYTES * rs_input + fresh
    # torch.distributed.pipelining runs every backward but the last without gradient sync and without
    # resharding (stage.py `backward_maybe_with_nosync`): the stage stays gathered and its gradients
    # accumulate unsharded in reduce_dtype (FSDPParam.unsharded_accumulated_grad).
    pipelined = grid.pp > 1
    gathered = np.where(pipelined, p.total, gathered)
    grads = np.where(pipelined, FP32_BYTES * p.total + fresh, grads)
    # DDP under autocast: bf16 casts of the weight matrices cached for backward; eager fp32
    # accumulation of each new weight gradient.
    autocast = {"loss": p.gemm + out, "embedding_backward": 0.0}.get(phase, p.gemm)
    ddp_grads = FP32_BYTES * emb if phase == "embedding_backward" else np.zeros(rank.n)
    ddp = grid.zero_stage == 0
    return np.where(ddp, autocast, gathered), np.where(ddp, ddp_grads, grads)


def _megatron(rank: Rank, phase: str) -> tuple[np.ndarray, np.ndarray]:
    p, zero = rank.params, rank.grid.zero_stage
    block, out, emb = p.largest_layer, p.output, p.embedding
    if phase == "loss":
        return np.where(zero >= 3, out, 0.0), np.zeros(rank.n)
    if phase == "embedding_backward":
        gathered = np.where(zero >= 3, emb, 0.0)
        grads = np.where(zero >= 2, MEGATRON_MAIN_GRAD_BYTES * emb, BF16_BYTES * emb)
        return gathered, grads
    gathered = np.where(zero >= 3, MEGATRON_FSDP_UNITS_GATHERED * block, 0.0)
    return gathered, np.where(zero >= 2, MEGATRON_MAIN_GRAD_BYTES * _reduced_layer(rank), 0.0)


def _reduced_layer(rank: Rank) -> np.ndarray:
    """Elements of the heaviest layer whose fp32 main gradients pass through the reduce-scatter
    bucket: only parameters whose shard group has more than one rank are reduce-scattered. Routed
    experts shard over expert-DP, which is often 1 for MoE layouts (EP·ETP = TP·CP·DP): their
    gradients then stay whole in the stored gradients, with no bucket beside them."""
    p = rank.params
    dense_sharded = dense_shard_group(rank.grid) > 1
    expert_sharded = expert_shard_group(rank.grid) > 1
    moe = np.where(dense_sharded, p.moe_layer_shared, 0.0) + np.where(expert_sharded, p.moe_layer_experts, 0.0)
    return np.maximum(np.where(dense_sharded, p.dense_layer, 0.0), moe)


def _deepspeed(rank: Rank, phase: str) -> tuple[np.ndarray, np.ndarray]:
    p, zero = rank.params, rank.grid.zero_stage
    block, out, emb = p.largest_layer, p.output, p.embedding
    if phase == "loss":
        return np.where(zero >= 3, out + block, 0.0), np.zeros(rank.n)
    if phase == "embedding_backward":
        return np.where(zero >= 3, emb, 0.0), BF16_BYTES * emb
    gathered = np.where(zero >= 3, block + np.minimum(DEEPSPEED_PREFETCH_BUCKET_ELEMENTS, block), 0.0)
    return gathered, np.zeros(rank.n)


def _nanotron(rank: Rank, phase: str) -> tuple[np.ndarray, np.ndarray]:
    """nanotron (ZeRO-0/1, nothing gathered): the bf16 `.grad` tensors its backward writes, freed only
    once the whole backward is done (FP32GradientAccumulator.backward). The rank's last layer is
    back-propagated first (with the output layer), the embedding last."""
    p = rank.params
    done = {"loss": 0.0, "last_layer_backward": p.output + p.largest_layer - p.largest_gemm,
            "last_layer_backward_end": p.output + p.largest_layer,
            "first_layer_backward": p.total - p.embedding - p.largest_gemm,
            "first_layer_backward_end": p.total - p.embedding,
            "embedding_backward": p.total}[phase]
    return np.zeros(rank.n), NANOTRON_HALF_GRAD_BYTES * np.maximum(done, 0.0)


def phase_buffers(rank: Rank, phase: str) -> PhaseBuffers:
    none = np.zeros(rank.n)
    if phase == "optimizer_step":
        return PhaseBuffers(none, none)
    framework = rank.setup.framework
    gathered, grads = {"fsdp": _fsdp, "megatron": _megatron, "deepspeed": _deepspeed,
                       "nanotron": _nanotron}[framework](rank, phase)
    gathered_bytes = gathered * _gathered_bytes_per_param(rank)
    if rank.setup.mode == "qlora" and phase != "embedding_backward":
        gathered_bytes = gathered_bytes + BF16_BYTES * rank.params.largest_gemm  # dequantised NF4 matrix
    if not rank.full_training:
        grads = none  # adapters' gradients are a few MB; the base has none
    return PhaseBuffers(gathered_weights=gathered_bytes, gradient_buffers=grads)
