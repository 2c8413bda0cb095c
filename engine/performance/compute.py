"""Compute time of one micro-batch on one GPU, per transformer layer and for the embedding and
logit layers: GEMMs at their sharded shapes (roofline + per-kernel cost), the attention core
(FlashAttention) and memory-bound elementwise work, forward, backward and recompute.

Shapes after sharding (Megatron-LM; Shoeybi et al. 2019, Korthikanti et al. 2022): a micro-batch
of b sequences holds M = b·s/cp tokens on each TP group; column/row-parallel GEMMs split the
output/input features by TP; with sequence parallelism the GEMMs still see all M tokens
(gathered), while norms and residuals work on M/tp. Routed experts see the tokens routed to
them: per GPU (M/tp)·top_k·etp token copies spread over E/ep local experts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..assumptions import compute as c
from ..assumptions.cuda_graphs import MOE_HOST_TIME_KEPT
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..flops import attention_core_flops_per_token, attention_dims, lora_target_dims, lora_targets_by_block
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, RECOMPUTE_SELECTIVE, PlanGrid
from ..recompute_modules import selective_modules
from ..training import TrainingSetup
from .gemm_efficiency import Roofline


@dataclass(frozen=True)
class LayerTimes:
    """Seconds per micro-batch on one GPU for one layer of a kind (arrays over the grid)."""

    forward: np.ndarray
    backward: np.ndarray
    recompute: np.ndarray  # extra forward work repeated in backward
    attention_forward: np.ndarray  # the attention core alone (CP overlap window)

    @property
    def total(self) -> np.ndarray:
        return self.forward + self.backward + self.recompute


@dataclass(frozen=True)
class MicrobatchCompute:
    dense_layer: LayerTimes
    moe_layer: LayerTimes | None
    embedding: np.ndarray  # forward + backward, first stage
    logits: np.ndarray  # output GEMM + cross-entropy, forward + backward, last stage
    tokens: np.ndarray  # M = b·s/cp tokens per TP group per micro-batch

    def layer_mix(self, model: ModelSpec, attr: str) -> np.ndarray:
        """Average over the model's layers of one LayerTimes field."""
        dense = getattr(self.dense_layer, attr)
        if self.moe_layer is None or model.num_moe_layers == 0:
            return dense
        f = model.num_moe_layers / model.num_layers
        return (1 - f) * dense + f * getattr(self.moe_layer, attr)


def rooflines(cluster: Cluster, setup: TrainingSetup, assume: PerformanceAssumptions) -> tuple[Roofline, Roofline]:
    """(linear layers, everything in BF16): FP8 applies to the linear layers only
    (Transformer Engine / torchao float8 keep attention and norms in BF16)."""
    gpu = cluster.gpu
    hbm = gpu.hbm_bandwidth_gbs * 1e9 * assume.hbm_efficiency
    fw = setup.framework
    bf16 = Roofline(gpu.bf16_tflops * 1e12, assume.gemm_eff(gpu, "bf16", fw), hbm, assume.kernel_fixed_s, 2.0)
    if setup.precision == "fp8" and gpu.fp8_tflops:
        fp8 = Roofline(gpu.fp8_tflops * 1e12, assume.gemm_eff(gpu, "fp8", fw), hbm, assume.kernel_fixed_s, 1.0)
        return fp8, bf16
    return bf16, bf16


def microbatch_compute(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
                       assume: PerformanceAssumptions) -> MicrobatchCompute:
    linear, bf16 = rooflines(cluster, setup, assume)
    gpu = cluster.gpu
    hbm = gpu.hbm_bandwidth_gbs * 1e9 * assume.hbm_efficiency
    fp8 = setup.precision == "fp8" and bool(gpu.fp8_tflops)
    frozen = setup.mode != "full"
    tp = grid.tp.astype(np.float64)
    M = grid.micro_batch * (setup.seq_len / grid.cp)
    h = model.hidden_size
    hidden_shard = np.where(grid.sp, tp, 1.0)  # norms/residuals split by SP, replicated without it
    bwd_gemm = c.FROZEN_BACKWARD_GEMMS_PER_FORWARD_GEMM if frozen else c.BACKWARD_GEMMS_PER_FORWARD_GEMM

    def gemms(shapes) -> tuple[np.ndarray, np.ndarray]:
        """Forward time and total GEMM weight entries per GPU of a list of (m, n, k, groups)."""
        fwd = sum(linear.gemm_time(m, n, k, g) for m, n, k, g in shapes)
        cast = sum(m * k * g for m, n, k, g in shapes) * (c.FP8_CAST_BYTES_PER_ELEMENT / hbm if fp8 else 0.0)
        weights = sum(n * k * g for m, n, k, g in shapes)
        return fwd + cast, weights

    # Attention projections.
    heads, d_qk, d_v = attention_dims(model)
    if model.mla is not None:
        mla = model.mla
        attn_shapes = [(M, (mla.kv_lora_rank + mla.qk_rope_head_dim), h, 1),  # KV down (replicated)
                       (M, heads * (mla.qk_nope_head_dim + mla.v_head_dim) / tp, mla.kv_lora_rank, 1),
                       (M, h, heads * d_v / tp, 1)]
        if mla.q_lora_rank:
            attn_shapes += [(M, mla.q_lora_rank, h, 1), (M, heads * d_qk / tp, mla.q_lora_rank, 1)]
        else:
            attn_shapes += [(M, heads * d_qk / tp, h, 1)]
    else:
        qkv = (heads + 2 * model.kv_heads) * model.head_size
        attn_shapes = [(M, qkv / tp, h, 1), (M, h, heads * d_v / tp, 1)]
    up = 2 if model.gated_mlp else 1
    ffn_passes = c.GATED_FFN_ELEMENTWISE_PASSES_FWD if model.gated_mlp else c.PLAIN_FFN_ELEMENTWISE_PASSES_FWD

    # Attention core: causal FLOPs per token, heads split by TP, queries by CP; averaged over the
    # layers, so sliding-window layers (Mistral, Gemma 2/3, gpt-oss) cost their window, not the
    # sequence (FlashAttention/cuDNN skip the blocks outside the window).
    # packed documents: each query attends within its document only (varlen kernels skip the rest)
    attn_flops = M * attention_core_flops_per_token(model, setup.attention_length) / model.num_layers / tp
    attn_fwd = attn_flops / (gpu.bf16_tflops * 1e12 * assume.attention_eff(gpu, setup.framework)) + assume.kernel_fixed_s

    # Elementwise work common to every layer: norms, residuals (by SP shard) and rotary (by TP).
    rotary_elems = M * (heads * d_qk + model.kv_heads * d_qk) / tp
    common_bytes = c.ACTIVATION_BYTES * (c.HIDDEN_ELEMENTWISE_PASSES_FWD * M * h / hidden_shard
                                         + c.ROTARY_PASSES_FWD * rotary_elems)
    # memory-bound kernels pay the small-kernel launch gap, not the large kernels' fitted fixed cost
    kernels = c.NON_GEMM_KERNELS_PER_LAYER_FWD * assume.small_kernel_fixed_s

    # Megatron-Core's fine-grained selective recompute (MoE/MLA models; recompute_modules.py) also
    # repeats the norms (read input, write output), the MLA up-projections and the experts' activation.
    modules = selective_modules(model, setup)
    core_recompute = 1.0 if "core_attn" in modules else 0.0  # a recipe's list may leave the attention core kept
    recipe_recompute = 0.0
    if "layernorm" in modules:
        recipe_recompute = (c.ACTIVATION_BYTES * c.NORM_RECOMPUTE_PASSES * max(model.norms_per_layer, 1)
                            * M * h / hidden_shard / hbm + max(model.norms_per_layer, 1) * assume.small_kernel_fixed_s)
    if "mla_up_proj" in modules:
        up_shapes = [attn_shapes[1]] + ([attn_shapes[4]] if model.mla.q_lora_rank else [])  # KV up, Q up
        recipe_recompute = recipe_recompute + gemms(up_shapes)[0]

    def layer(mlp_shapes, mlp_elementwise_bytes, extra_fwd=0.0, act_recompute=0.0) -> LayerTimes:
        gemm_fwd, weights = gemms(attn_shapes + mlp_shapes)
        adapters = _lora_time(model, setup, M, tp, linear, mlp_shapes is dense_shapes, assume.small_kernel_fixed_s)
        dequant = (weights * c.QLORA_DEQUANT_BYTES_PER_WEIGHT / hbm) if setup.mode == "qlora" else 0.0
        elementwise = (common_bytes + mlp_elementwise_bytes) / hbm + kernels + extra_fwd
        fwd = gemm_fwd + attn_fwd + elementwise + adapters + dequant
        bwd = (bwd_gemm * gemm_fwd + c.ATTENTION_BACKWARD_TIME_RATIO * attn_fwd
               + c.ELEMENTWISE_BACKWARD_RATIO * elementwise + 2 * adapters + dequant)
        recompute = np.select([grid.recompute == RECOMPUTE_FULL, grid.recompute == RECOMPUTE_SELECTIVE],
                              [fwd, core_recompute * attn_fwd + recipe_recompute + act_recompute], 0.0)
        return LayerTimes(forward=fwd, backward=bwd, recompute=recompute, attention_forward=attn_fwd)

    ffn = model.ffn_hidden_size
    dense_shapes = [(M, up * ffn / tp, h, 1), (M, h, ffn / tp, 1)]
    dense = layer(dense_shapes, c.ACTIVATION_BYTES * ffn_passes * M * ffn / tp)

    moe_times = None
    if model.moe is not None:
        moe = model.moe
        local_experts = np.maximum(moe.num_experts / grid.ep, 1.0)
        copies = M / tp * moe.top_k * grid.etp * c.MOE_LOAD_IMBALANCE  # token copies this GPU computes
        per_expert = copies / local_experts
        e_ffn = moe.expert_ffn_hidden_size / grid.etp
        moe_shapes = [(per_expert, up * e_ffn, h, local_experts), (per_expert, h, e_ffn, local_experts),
                      (M, moe.num_experts, h, 1)]  # router (replicated)
        moe_bytes = c.ACTIVATION_BYTES * (ffn_passes * copies * e_ffn + c.MOE_PERMUTE_PASSES_FWD * M / tp * moe.top_k * h)
        if moe.num_shared_experts:
            s_ffn = moe.num_shared_experts * moe.shared_ffn
            moe_shapes += [(M, up * s_ffn / tp, h, 1), (M, h, s_ffn / tp, 1)]
            moe_bytes = moe_bytes + c.ACTIVATION_BYTES * ffn_passes * M * s_ffn / tp
        act = (c.ACTIVATION_BYTES * c.GATED_ACTIVATION_RECOMPUTE_PASSES * copies * e_ffn / hbm + assume.small_kernel_fixed_s
               if "moe_act" in modules else 0.0)
        # Exposed host time of the dropless MoE layer (assumptions/moe.py), per local expert,
        # forward; the backward's share follows ELEMENTWISE_BACKWARD_RATIO. Full-iteration CUDA
        # graphs remove it (assumptions/cuda_graphs.py).
        host = assume.moe_host_time_per_expert_fwd * local_experts * MOE_HOST_TIME_KEPT[setup.cuda_graphs]
        moe_times = layer(moe_shapes, moe_bytes, extra_fwd=host, act_recompute=act)

    # Logit layer and loss (last stage); embedding gather/scatter (first stage).
    logit_fwd, _ = gemms([(M, model.vocab_size / tp, h, 1)])
    ce = M * model.vocab_size / tp * c.CROSS_ENTROPY_BYTES_PER_LOGIT / hbm
    logits = (1 + bwd_gemm) * logit_fwd + ce + 3 * assume.small_kernel_fixed_s  # cross-entropy kernels
    embedding = 3 * c.ACTIVATION_BYTES * M * h / hidden_shard / hbm + 2 * assume.small_kernel_fixed_s
    return MicrobatchCompute(dense_layer=dense, moe_layer=moe_times, embedding=embedding, logits=logits, tokens=M)


def _lora_time(model: ModelSpec, setup: TrainingSetup, M, tp, roof: Roofline, dense_mlp: bool,
               small_kernel_fixed_s: float) -> np.ndarray | float:
    """Forward time of the LoRA adapters of one layer: per adapted module (flops.lora_modules: the
    Megatron stack adapts fused modules) an (in→r) and an (r→out) GEMM. Adapters follow their base
    layer's TP split (Megatron/NeMo LoRA shard the larger factor). A rank-r GEMM is memory-bound and
    tiny, so it pays the small-kernel launch gap (SMALL_KERNEL_FIXED_S), not KERNEL_FIXED_S."""
    if setup.mode == "full":
        return 0.0
    r = setup.lora_rank
    ffn = model.ffn_hidden_size if dense_mlp or model.moe is None else model.moe.expert_ffn_hidden_size
    adapter = replace(roof, kernel_fixed_s=small_kernel_fixed_s)
    attn, mlp = lora_targets_by_block(model, setup)
    total = 0.0
    for target in attn + mlp:
        d_in, d_out = lora_target_dims(model, target, ffn)
        if d_in == 0:
            continue
        total = total + adapter.gemm_time(M, r, d_in / tp) + adapter.gemm_time(M, d_out / tp, r)
    return total
