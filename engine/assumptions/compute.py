"""Compute assumptions: how close kernels get to the GPU's datasheet peak.

The performance model times every GEMM as  flops / (peak · GEMM_EFFICIENCY) + a fixed
per-kernel cost, attention as flops / (peak · ATTENTION_EFFICIENCY), and memory-bound work
(norms, activations, casts, the optimizer step) as bytes / (HBM bandwidth · HBM_EFFICIENCY).

Values marked "calibrated" are fitted by `benchmarks/fit_calibration.py` on the measured runs
shipped in `engine/calibration/data/` and live in `calibrated.py` (generated, do not edit by
hand); this module names them and documents where they come from.
"""

from __future__ import annotations

from ..hardware import GPUSpec
from . import calibrated

# --- GPU generations ---------------------------------------------------------------------
# Efficiency constants differ by architecture (tensor-core generation and software maturity),
# not by SKU: an H200 runs the same kernels as an H100, with more memory bandwidth.
GENERATION_BY_ID_PREFIX: dict[str, str] = {
    "a100": "ampere", "a10": "ampere", "a30": "ampere", "a40": "ampere", "rtx-3090": "ampere",
    "h100": "hopper", "h200": "hopper", "h800": "hopper", "h20": "hopper", "gh200": "hopper",
    "b100": "blackwell", "b200": "blackwell", "b300": "blackwell", "gb200": "blackwell", "gb300": "blackwell",
    "l4": "ada", "l40": "ada", "rtx-4090": "ada", "rtx-6000-ada": "ada",
    "mi250": "cdna2", "mi300": "cdna3", "mi325": "cdna3", "mi355": "cdna4",
}
KNOWN_GENERATIONS = ("ampere", "hopper", "blackwell", "ada", "cdna2", "cdna3", "cdna4")


def gpu_generation(gpu: GPUSpec) -> str:
    """'ampere' | 'hopper' | 'blackwell' | 'ada' | 'cdna2' | 'cdna3' | 'cdna4' | 'other'."""
    ident = gpu.id.lower()
    for prefix in sorted(GENERATION_BY_ID_PREFIX, key=len, reverse=True):
        if ident.startswith(prefix):
            return GENERATION_BY_ID_PREFIX[prefix]
    return "other"


# --- Dense GEMMs ---------------------------------------------------------------------------
# Fraction of the dense BF16 peak a large, well-shaped GEMM sustains inside a training step
# (calibrated). Microbenchmarks reach ~0.80-0.85 on A100 and ~0.70-0.75 on H100 SXM
# (NVIDIA cuBLAS results; Ultra-Scale Playbook appendix); in a training step clocks throttle
# under power and other kernels compete, so the fitted values are lower.
GEMM_EFFICIENCY: dict[str, float] = calibrated.GEMM_EFFICIENCY
# Same for FP8 GEMMs against the FP8 peak (calibrated; Transformer Engine delayed/current
# scaling; the quantisation casts are timed separately as memory-bound work).
FP8_GEMM_EFFICIENCY: dict[str, float] = calibrated.FP8_GEMM_EFFICIENCY
# Generations not covered by the calibration data use this (AMD, Ada): a conservative value
# close to the fitted Hopper one, flagged by extrapolation_warnings().
# torchao's "rowwise" FP8 recipe (one scale per row of each operand, torchtitan
# --float8.recipe_name rowwise) against its tensorwise one (calibrated on torchtitan's table,
# which measures both on the same plans): the row-scaled GEMMs and the extra per-row amax and
# scaling kernels run slower. Multiplies FP8_GEMM_EFFICIENCY for runs that used it.
FP8_ROWWISE_GEMM_FACTOR: float = calibrated.FP8_ROWWISE_GEMM_FACTOR
DEFAULT_GEMM_EFFICIENCY = 0.55
DEFAULT_FP8_GEMM_EFFICIENCY = 0.40

# Fixed cost of one kernel, seconds (calibrated): launch, prologue/epilogue and the last
# partial wave. This is what makes small GEMMs (large TP, micro-batch 1) run far below peak:
# a GEMM of W flops takes W/(peak·eff) + KERNEL_FIXED_S, so its efficiency is
# eff · W / (W + peak·eff·KERNEL_FIXED_S). Typical measured launch+tail costs are 3-10 µs.
KERNEL_FIXED_S: float = calibrated.KERNEL_FIXED_S
# Kernels in one transformer layer's forward pass besides the GEMMs (norms, rotary, residual
# adds, activation, attention, casts), counted from Megatron-Core's fused layer (~12) and an
# unfused eager PyTorch layer (~25); we take the middle. Backward launches about twice as many.
NON_GEMM_KERNELS_PER_LAYER_FWD = 18
# Fixed cost of one SMALL memory-bound kernel, seconds (an assumption, NOT fitted): norms, rotary,
# residual adds, activations, casts, the LoRA adapters' rank-r GEMMs and the CP ring's softmax/output
# corrections. Such a kernel moves a few MB and has no partial-wave tail worth the name, so what it
# pays beyond its bytes is the launch gap between kernels. KERNEL_FIXED_S (fitted, ~19 µs) stands for
# the large kernels' prologue/epilogue and last partial wave (GEMMs, the attention core), which is
# why it is 2-6x the launch-and-tail range quoted above. 4 µs sits in that 3-10 µs range, at its low
# end: NVIDIA's CUDA Graphs post (A. Gray, "Getting Started with CUDA Graphs", NVIDIA Developer Blog,
# 2019) measures about 3.8 µs per short kernel launched back to back in a stream (3.4 µs as a graph).
# Session 9's diagnosis (docs/performance.md) used the same 4 µs.
SMALL_KERNEL_FIXED_S = 4e-6
BACKWARD_KERNEL_RATIO = 2.0

# Host (CPU) time to dispatch one transformer layer's forward and backward kernels for one
# micro-batch, by framework (calibrated). The GPU cannot run faster than the host feeds it:
# a micro-batch takes at least layers × this. Eager PyTorch spends 10-50 µs per operator in
# Python, autograd and the dispatcher; fused kernels (Transformer Engine) and torch.compile
# cut the operator count. It binds when sharded GEMMs are small (large TP, micro-batch 1).
# "nanotron" is the Ultra-Scale Playbook's framework (calibrated on its sweep; `--framework nanotron`).
HOST_TIME_PER_LAYER_S: dict[str, float] = calibrated.HOST_TIME_PER_LAYER_S
# Extra host time per layer and micro-batch, per TP rank, when pipeline sends leave the node
# (calibrated, nanotron only). In the Ultra-Scale Playbook sweep, nanotron runs whose pipeline
# stages sit on different nodes never ran a micro-batch faster than
# layers_per_stage × (host time + this × TP), whatever the model width or micro-batch: about
# 10 / 15 / 25 ms per layer at TP 2 / 4 / 8, against 4.6 ms with PP = 1 or with every stage in one
# node. It shows up as a ~2× slowdown of TP×PP runs with small micro-batches (mb/TP <= 1). The
# mechanism is not identified (nanotron's p2p blocks the host on every receive to read tensor
# metadata, and its TP collectives are launched from Python); Megatron, FSDP and DeepSpeed show
# nothing like it in their data, so it is zero for them.
PIPELINE_HOST_TIME_PER_LAYER_PER_TP_S: dict[str, float] = calibrated.PIPELINE_HOST_TIME_PER_LAYER_PER_TP_S
# Full recompute dispatches every layer's forward a second time inside backward: forward (1/3 of a
# layer's kernels, BACKWARD_KERNEL_RATIO = 2 above) is launched twice, so 4/3 ≈ 1.33; we keep 1.5 to
# cover the checkpoint wrappers' own Python work (an assumption, not fitted).
FULL_RECOMPUTE_HOST_FACTOR = 1.5

# --- Attention core (FlashAttention) -----------------------------------------------------
# Fraction of the BF16 peak reached by FlashAttention-2-class attention, forward (calibrated;
# the FlashAttention-2 paper reports 50-73 % on A100, and ~35 % on H100 where it cannot use the
# Hopper-specific instructions; FlashAttention-3 paper, figure 1).
ATTENTION_EFFICIENCY: dict[str, float] = calibrated.ATTENTION_EFFICIENCY
DEFAULT_ATTENTION_EFFICIENCY = 0.25
# Which kernel stack a framework runs. Megatron-Core uses Transformer Engine: cuBLASLt GEMMs with
# fused epilogues, fused norms/rotary/cross-entropy, and cuDNN fused attention, which on
# Hopper/Blackwell follows the warp-specialised, asynchronous FlashAttention-3 design (Shah et
# al. 2024: 1.5-2.0× FlashAttention-2 on H100). PyTorch-native stacks (torchtitan/FSDP,
# DeepSpeed, nanotron, llm-foundry) run eager GEMMs and FlashAttention-2-class kernels.
KERNEL_STACK_BY_FRAMEWORK: dict[str, str] = {"megatron": "te", "fsdp": "pytorch", "deepspeed": "pytorch",
                                             "nanotron": "pytorch"}
FUSED_ATTENTION_GENERATIONS = ("hopper", "blackwell")
# GEMM efficiency of PyTorch-native stacks relative to Transformer Engine's (calibrated): the
# GEMM_EFFICIENCY table above is Transformer Engine's.
PYTORCH_GEMM_FACTOR: float = calibrated.PYTORCH_GEMM_FACTOR
# Speed of the fused (FA3-class) kernel over the FA2-class one on those GPUs (calibrated).
FUSED_ATTENTION_SPEEDUP: float = calibrated.FUSED_ATTENTION_SPEEDUP
# Backward of the attention core takes this many times the forward's time: it has 5 matmuls
# against the forward's 2, one of them recomputing QK^T (FlashAttention-2 paper, section 3.2).
ATTENTION_BACKWARD_TIME_RATIO = 2.5
# Context-parallel ring attention splits each layer's attention into one kernel per ring step, and
# every step after the first also merges its partial result into the running one: Transformer
# Engine's AttnFuncWithCPAndKVP2P (context_parallel.py) launches, per extra step, the attention on
# the received K/V chunk, flash_attn_fwd_softmax_lse_correction and flash_attn_fwd_out_correction;
# its backward, per extra step, the attention backward and the dK/dV (and dQ) accumulations. So
# about three more kernels per extra ring step in each direction than one un-split attention, each
# paying a fixed cost (a count from the source, not fitted). Of the three, one is an attention kernel
# (priced at KERNEL_FIXED_S like the un-split attention) and two are small corrections/accumulations
# (priced at SMALL_KERNEL_FIXED_S).
CP_KERNELS_PER_EXTRA_RING_STEP = 3
CP_ATTENTION_KERNELS_PER_EXTRA_RING_STEP = 1
CP_SMALL_KERNELS_PER_EXTRA_RING_STEP = CP_KERNELS_PER_EXTRA_RING_STEP - CP_ATTENTION_KERNELS_PER_EXTRA_RING_STEP

# --- Backward GEMMs ------------------------------------------------------------------------
# Each forward GEMM has two backward GEMMs of the same size: data gradient and weight gradient
# (Narayanan et al. 2021, appendix). Frozen base weights (LoRA/QLoRA) skip the weight gradient.
BACKWARD_GEMMS_PER_FORWARD_GEMM = 2
FROZEN_BACKWARD_GEMMS_PER_FORWARD_GEMM = 1
# Share of the backward's GEMM time a frozen base (LoRA/QLoRA) keeps, and so of the TP collectives
# the backward can hide behind GEMMs (performance/tp.py): data-gradient GEMMs only, 1 of 2 per
# forward GEMM. The adapters' own GEMMs are tiny (rank 16-32) and hide nothing.
FROZEN_BACKWARD_GEMM_SHARE = FROZEN_BACKWARD_GEMMS_PER_FORWARD_GEMM / BACKWARD_GEMMS_PER_FORWARD_GEMM

# --- Memory-bound work ---------------------------------------------------------------------
# Fraction of the HBM datasheet bandwidth elementwise kernels reach (STREAM-like copies reach
# 85-90 % on A100/H100; fused norms and activations less). Assumption, not fitted.
HBM_EFFICIENCY = 0.70
# Bytes per activation element (BF16).
ACTIVATION_BYTES = 2
# Elements of the hidden size read or written per token per layer in the forward pass outside
# GEMMs: 2 norms (read h, write h), 2 residual adds (read 2h, write h), the attention output
# and MLP output written once more by bias/dropout-free epilogues: 4 + 6 = 10.
HIDDEN_ELEMENTWISE_PASSES_FWD = 10
# Per FFN element: SwiGLU reads gate and up, writes the product (3); plain GeLU reads and writes (2).
GATED_FFN_ELEMENTWISE_PASSES_FWD = 3
PLAIN_FFN_ELEMENTWISE_PASSES_FWD = 2
# Rotary embedding on q and k: read and write each (2 per q/k element).
ROTARY_PASSES_FWD = 2
# Backward elementwise work reads the saved input and the incoming gradient and writes one
# gradient: about twice the forward's traffic.
ELEMENTWISE_BACKWARD_RATIO = 2.0
# MoE token permutation and un-permutation: each routed token copy is read and written on
# the way in and on the way out (4 hidden-size passes per token per routed expert).
MOE_PERMUTE_PASSES_FWD = 4
# Cross-entropy over the logits: FP32 upcast, max, exp-sum, and the gradient written in place,
# about 4 passes of 4 bytes per logit for forward and backward together (Megatron's fused
# vocab-parallel cross-entropy).
CROSS_ENTROPY_BYTES_PER_LOGIT = 16
# FP8 (Transformer Engine): each GEMM input is read in BF16 and written in FP8 once per use
# (2 + 1 bytes per element), for activations in forward and gradients in backward.
FP8_CAST_BYTES_PER_ELEMENT = 3
# QLoRA: a 4-bit (NF4) base weight is read (0.5 byte + block scales) and written as BF16
# (2 bytes) before each use: forward, backward data-gradient, and forward again under recompute.
QLORA_DEQUANT_BYTES_PER_WEIGHT = 2.6

# --- Optimizer step ------------------------------------------------------------------------
# AdamW on FP32 master weights, per parameter: read and write master weight, m and v (24),
# read the FP32 gradient (4), write the BF16 weight copy (2), zero the gradient buffer (4),
# plus the gradient-norm pass for clipping (4): 38 bytes, memory-bound.
OPTIMIZER_BYTES_PER_PARAM = 38

# --- Optimizer phase of full training in the Megatron family (performance/optimizer_phase.py) ----
# Megatron-LM / NeMo / Megatron-Bridge (the engine's framework "megatron") run, once per optimizer
# step and outside the forward-backward (after a CUDA-graph replay, not overlapped), more than
# AdamW's bytes above: gradient-norm clipping (the norm of every owned main gradient, already in the
# 38 bytes, plus a small all-reduce of the norm), zero_grad_buffer over the WHOLE local main-gradient
# buffer (every parameter of the GPU's TP/PP chunk, not only the owned ZeRO shard: the buffer is the
# DDP's param-and-grad buffer, reduce-scattered into the shard; megatron/core/distributed/
# param_and_grad_buffer.py), FP8 re-quantisation of the updated weights (FP8 runs), and the
# launches of all of these per parameter tensor. Which frameworks pay it: the keys of
# OPTIMIZER_PHASE_FIXED_S below.
# FP8 re-quantisation with per-tensor (current / delayed) scaling, per local weight: read the BF16
# weight for its amax (2 B), read it again and write the FP8 copy (2 + 1 B) = 5 bytes, memory-bound
# (Transformer Engine's cast_to_fp8 after the optimizer step, as with --fp8-param-gather).
FP8_REQUANT_BYTES_PER_PARAM = 5
# The phase's per-step constant: the norm all-reduce's latency, the per-tensor launches of clipping,
# zeroing and casting, the optimizer's own host loop (multi-tensor-apply chunks), whatever of it the
# byte counts above do not price. FITTED (benchmarks/fit_calibration.py, `optimizer_phase_ms`, on the
# calibration runs only, bounds 0-100 ms): the bound is Megatron's own timer log in NVIDIA/nccl issue
# #743 (`optimizer` 57.5 ms, `optimizer-inner-step` 7.3-46 ms per step for a BERT-size model).
# Not charged to LoRA/QLoRA (frozen base: no main gradients; the adapters' are tiny) nor to FSDP,
# DeepSpeed, torchtitan or nanotron (no measured phase for them; their optimizer stays AdamW's bytes).
OPTIMIZER_PHASE_FIXED_S: dict[str, float] = {"megatron": calibrated.OPTIMIZER_PHASE_FIXED_S}

# --- Pipeline ---------------------------------------------------------------------------
# Frameworks can give the last stage fewer layers so the logit layer and loss do not make it
# the slowest (Megatron --account-for-loss-in-pipeline-split / --decoder-last-pipeline-num-layers,
# nanotron's cost-balanced split, torchtitan's manual split points). We assume the plan does.
PIPELINE_BALANCES_OUTPUT_LAYER = True
# Frameworks whose 1F1B fill and drain are priced stage by stage (pp.pipeline_time_uneven: the
# flow-shop makespan sum(t_r) + (m - 1)·max(t_r)) instead of p − 1 slots of the busiest stage.
# The flow-shop form holds for any non-interleaved 1F1B; it is switched on only where it was
# checked against measured runs and the constants refitted with it: nanotron (the Playbook sweep:
# fitted MAPE 10.0 % -> 9.9 %, PP 16-32 no longer under-predicted by the busiest stage's pace).
# Megatron/DeepSpeed keep the uniform form until a full refit checks them.
PIPELINE_FILL_PER_STAGE: tuple[str, ...] = ("nanotron",)

# --- MoE -----------------------------------------------------------------------------------
# Ratio of the busiest expert's tokens to the mean. Megatron-Bridge benchmarks force-balance
# the router (1.0); real dropless training with an auxiliary loss sits around 1.1-1.3
# (DeepSeek-V3 report, figure 9). We keep 1.0 so predictions match the balanced benchmarks.
MOE_LOAD_IMBALANCE = 1.0

# Megatron-Core fine-grained recompute (recompute_modules.py): elementwise passes repeated in
# backward. A recomputed norm reads its input and writes its output (2 passes of the hidden
# width); a recomputed SwiGLU (moe_act) reads gate and up and writes their product (3 passes of
# the expert width).
NORM_RECOMPUTE_PASSES = 2
GATED_ACTIVATION_RECOMPUTE_PASSES = 3
