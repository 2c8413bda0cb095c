"""Rollout generation time and memory, from the decode roofline.

Each inference engine (inference_tp GPUs) generates its share S of the step's sequences. vLLM holds
as many at once as its KV budget allows — c = min(S, ⌊budget / (KV bytes of one full sequence)⌋),
budget = ROLLOUT_GPU_MEMORY_UTILIZATION · GPU memory − the engine's weights — and runs ⌈S / c⌉ waves.

A decode step advances every sequence of a wave by one token. Per GPU it must read its share of the
weights and the wave's KV cache from HBM, and do 2 FLOPs per weight and per token plus attention
(Pope et al. 2022, "Efficiently Scaling Transformer Inference", sec. 2; the roofline of Williams et al.
2009):
    bytes  = W/tp + c · ctx · kv_per_token           (ctx = prompt + response/2, the mean context)
    flops  = c · (2 · P_active + 4 · L · heads · head_dim · ctx) / tp
    t_step = max(bytes / (HBM · DECODE_HBM_BANDWIDTH_FRACTION), flops / (peak · DECODE_COMPUTE_EFFICIENCY))
so a wave takes response_len · t_step. The prompts are prefilled first, compute-bound:
S · prompt_len · forward FLOPs per token / (tp · peak · DECODE_COMPUTE_EFFICIENCY).
Every response is assumed to run to response_len (the rollout waits for the longest one).
Not modelled: TP all-reduces inside the engine, sampling, scheduling and CUDA-graph capture, the
weight copy from the training layout into the engine (a local copy in co-located verl).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..assumptions.memory import GIB
from ..assumptions.post_training import (DECODE_COMPUTE_EFFICIENCY, DECODE_HBM_BANDWIDTH_FRACTION,
                                         INFERENCE_WEIGHT_BYTES, ROLLOUT_GPU_MEMORY_UTILIZATION)
from ..cluster import Cluster
from ..errors import ShardwiseInputError
from ..flops import attention_dims, forward_flops_per_token, matmul_params
from ..model_spec import ModelSpec
from ..params import total_params
from .kv_cache import kv_cache_bytes_per_token, sequences_per_engine
from .spec import PostTraining


@dataclass(frozen=True)
class Rollout:
    sequences_per_engine: int
    concurrent_sequences: int  # per engine, limited by the KV budget
    waves: int
    inference_weights_bytes: float  # per GPU
    kv_cache_bytes: float  # per GPU, what the concurrent sequences occupy at full length
    kv_budget_bytes: float  # per GPU
    prefill_s: float
    decode_s: float
    flops_per_gpu: float  # model FLOPs of generation, one GPU
    over_budget: bool = False  # not one sequence fits the KV budget: one at a time assumed

    @property
    def time_s(self) -> float:
        return self.prefill_s + self.decode_s


def inference_weight_bytes(model: ModelSpec, inference_tp: int) -> float:
    """The engine's bf16 weights on one GPU (every matrix, embedding and LM head split by TP)."""
    return total_params(model) * INFERENCE_WEIGHT_BYTES / inference_tp


def decode_step_time(model: ModelSpec, cluster: Cluster, inference_tp: int, batch: int, context: float) -> float:
    """Seconds for one decode step of `batch` sequences at mean context `context` (roofline)."""
    gpu = cluster.gpu
    heads, d_qk, d_v = attention_dims(model)
    kv_read = batch * context * kv_cache_bytes_per_token(model, inference_tp)
    bytes_read = inference_weight_bytes(model, inference_tp) + kv_read
    flops = batch * (2.0 * matmul_params(model).total
                     + 2.0 * model.num_layers * heads * (d_qk + d_v) * context) / inference_tp
    memory_s = bytes_read / (gpu.hbm_bandwidth_gbs * 1e9 * DECODE_HBM_BANDWIDTH_FRACTION)
    compute_s = flops / (gpu.bf16_tflops * 1e12 * DECODE_COMPUTE_EFFICIENCY)
    return max(memory_s, compute_s)


def check_inference_tp(model: ModelSpec, cluster: Cluster, tp: int) -> None:
    """vLLM splits attention heads over its TP group; an engine needs that many GPUs."""
    if tp > cluster.num_gpus:
        raise ShardwiseInputError(f"inference TP {tp} needs more than the {cluster.num_gpus} GPUs there are")
    if model.num_attention_heads % tp:
        raise ShardwiseInputError(f"inference TP {tp} does not divide the {model.num_attention_heads} attention "
                                  f"heads of {model.name} (vLLM requires it)")


def rollout_warnings(cluster: Cluster, post: PostTraining, r: "Rollout") -> list[str]:
    """What the rollout's numbers assume that a real run would not do."""
    tp, out = post.inference_tp, []
    if cluster.num_gpus % tp:
        out.append(f"inference TP {tp} does not divide the {cluster.num_gpus} GPUs: "
                   f"{cluster.num_gpus % tp} GPU(s) sit idle during the rollout")
    if tp > cluster.gpus_per_node:
        out.append(f"inference TP {tp} spans nodes (a node has {cluster.gpus_per_node} GPUs); the engine's "
                   f"all-reduces are not modelled")
    if r.over_budget:
        out.append(f"not one sequence of {post.sequence_len:,} tokens fits in vLLM's KV budget "
                   f"({ROLLOUT_GPU_MEMORY_UTILIZATION:.0%} of the GPU minus the engine's weights): the numbers assume one "
                   f"sequence at a time beyond it; raise the inference TP or gpu_memory_utilization")
    return out


def rollout(model: ModelSpec, cluster: Cluster, post: PostTraining, global_batch: int) -> Rollout:
    tp = post.inference_tp
    check_inference_tp(model, cluster, tp)
    S = sequences_per_engine(global_batch, cluster.num_gpus, tp)
    weights = inference_weight_bytes(model, tp)
    per_sequence = post.sequence_len * kv_cache_bytes_per_token(model, tp)
    budget = ROLLOUT_GPU_MEMORY_UTILIZATION * cluster.gpu.memory_gib * GIB - weights
    concurrent = min(S, max(int(budget // per_sequence), 0))
    gpu = cluster.gpu
    prefill_flops = S * post.prompt_len * forward_flops_per_token(model, post.prompt_len) / tp
    prefill = prefill_flops / (gpu.bf16_tflops * 1e12 * DECODE_COMPUTE_EFFICIENCY)
    decode_flops = S * post.response_len * forward_flops_per_token(model, post.sequence_len) / tp
    over_budget = concurrent < 1  # reported as a warning; the memory then shows what one sequence costs
    concurrent = max(concurrent, 1)
    waves, last = divmod(S, concurrent)
    context = post.prompt_len + post.response_len / 2
    decode = waves * post.response_len * decode_step_time(model, cluster, tp, concurrent, context)
    if last:
        decode += post.response_len * decode_step_time(model, cluster, tp, last, context)
    return Rollout(S, concurrent, waves + (1 if last else 0), weights, concurrent * per_sequence, budget,
                   prefill, decode, prefill_flops + decode_flops, over_budget)
