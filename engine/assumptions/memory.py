"""Constants of the memory model, each with where it comes from.

Byte sizes are exact; framework defaults are quoted from the framework's own code/config at the
versions pinned in pyproject.toml; runtime overheads (CUDA context, NCCL, fragmentation) are
order-of-magnitude figures from the cited documentation and are reported in `other` only.
"""

from __future__ import annotations

GIB = 2**30
MIB = 2**20

# --- element sizes -----------------------------------------------------------------------------
BF16_BYTES = 2
FP32_BYTES = 4
FP8_BYTES = 1
INT64_BYTES = 8

# QLoRA (Dettmers et al. 2023, "QLoRA", sec. 3 "Double Quantization"): NF4 weights are 4 bits; with
# block size 64 and fp32 absmax constants that costs 32/64 = 0.5 extra bits/param, double
# quantisation (8-bit constants, second-level block 256) brings it to 8/64 + 32/(64·256) = 0.127.
NF4_BITS_PER_PARAM = 4.0
NF4_DOUBLE_QUANT_CONSTANT_BITS_PER_PARAM = 8 / 64 + 32 / (64 * 256)  # 0.127 bits

# --- optimizer (AdamW) ---------------------------------------------------------------------------
ADAM_MOMENTS = 2  # exp_avg and exp_avg_sq, fp32 in every framework modelled here
FP32_MASTER_WEIGHTS = 1  # Megatron and DeepSpeed keep an fp32 master copy next to bf16 params

# --- Megatron-LM / Megatron-Core -----------------------------------------------------------------
# megatron/training/theoretical_memory_usage.py: 18 bytes/param without the distributed optimizer
# (bf16 param 2 + fp32 main grad 4 + fp32 master/m/v 12), 6 + 12/DP with it. bf16 forces fp32
# gradient accumulation ("bfloat16 requires gradient accumulation and all-reduce to be done in
# fp32", megatron/training/arguments.py). The distributed optimizer shards over the data-parallel
# group *with* context parallelism (megatron/core/optimizer: `intra_dp_cp` process group).
MEGATRON_MAIN_GRAD_BYTES = FP32_BYTES
# TransformerEngine FP8 (delayed or current scaling) caches an FP8 copy of each GEMM weight and of its
# transpose for the backward pass (TE `Linear`: `weight_fp8` + transpose cache) → 2 bytes/GEMM param.
TE_FP8_WEIGHT_CACHE_BYTES = 2 * FP8_BYTES

# --- DeepSpeed ZeRO (deepspeed/runtime/zero/config.py defaults) -----------------------------------
DEEPSPEED_REDUCE_BUCKET_ELEMENTS = 500_000_000  # reduce_bucket_size = 5e8
DEEPSPEED_PREFETCH_BUCKET_ELEMENTS = 50_000_000  # stage3_prefetch_bucket_size = 5e7
DEEPSPEED_MAX_LIVE_PARAMETERS = 1_000_000_000  # stage3_max_live_parameters = 1e9
DEEPSPEED_SUB_GROUP_ELEMENTS = 1_000_000_000  # sub_group_size = 1e9 (stage 3 steps per sub-group)
# Gradient reduction buckets, bf16, allocated once and kept: stage 1/2 with contiguous_gradients
# (default True) allocate one bucket, a second only with overlap_comm (default False below stage 3;
# stage_1_and_2.py `setup_buckets`); stage 3 allocates one flat bucket (stage3.py, "IPG").
DEEPSPEED_REDUCE_BUCKETS = 1
# The step upcasts the bf16 gradient partition to an fp32 copy for the optimizer
# (stage_1_and_2.py `single_grad_partition`, stage3.py `_prepare_fp32_grad_for_sub_group`), freed
# after the step.
DEEPSPEED_STEP_FP32_GRAD_BYTES = FP32_BYTES

# --- PyTorch FSDP2 as torchtitan 0.2.2 configures it (torchtitan/models/llama3/infra/parallelize.py)
# MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32); sharded parameters stay fp32.
# `fully_shard(tok_embeddings)`, each block, `[norm, output]` (reshard_after_forward=False: "FSDP
# would prefetch them immediately after the forward pass"), then the root. With pipeline
# parallelism blocks are *not* resharded after forward ("default" policy: not pp_enabled).
FSDP_BLOCKS_GATHERED = 2  # the block being computed + the one prefetched (FSDP2 implicit prefetch)
# foreach_reduce copies the unsharded bf16 grads into one fp32 reduce-scatter input of the unit's
# full size; the bf16 unsharded grads and that input coexist while it is filled.
FSDP_REDUCE_SCATTER_INPUTS_IN_FLIGHT = 1

# --- Megatron-FSDP (megatron/core/distributed/fsdp): ZeRO-2/3 inside Megatron, per layer units ----
MEGATRON_FSDP_UNITS_GATHERED = 2  # current + prefetched transformer layer

# --- activations ---------------------------------------------------------------------------------
# Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models"), sec. 4.1:
# dropout masks are 1 byte per element.
DROPOUT_MASK_BYTES = 1
# Flash attention (Dao et al. 2022) saves an fp32 log-sum-exp per query row and head.
FLASH_LSE_BYTES = FP32_BYTES
# Norm statistics kept for backward per token: RMSNorm its fp32 reciprocal RMS; LayerNorm mean and
# rstd (Apex/TE fused kernels, torch's CUDA `_fused_rms_norm`).
RMSNORM_STATS_BYTES = FP32_BYTES
LAYERNORM_STATS_BYTES = 2 * FP32_BYTES
# Top-k dispatch bookkeeping kept for backward, per (token, chosen expert) pair: the int64 expert
# index of torch.topk, the int64 permutation that sorts pairs by expert and the int64 token id
# used to gather and scatter, plus the bf16 routing weight (PyTorch eager MoE, e.g. torchtitan).
MOE_ROUTING_BYTES_PER_PAIR = 3 * INT64_BYTES + BF16_BYTES

# --- logits and loss -----------------------------------------------------------------------------
# Eager PyTorch `F.cross_entropy(logits.float(), labels)` (torchtitan components/loss.py, HF
# ForCausalLMLoss): in backward the fp32 log-softmax output, the fp32 gradient coming from nll_loss
# and the fp32 gradient it produces are alive at once: 3 × 4 bytes per logit. (Forward holds the
# bf16 logits, the fp32 copy and the log-softmax output: 10 bytes, less.)
EAGER_CROSS_ENTROPY_BYTES_PER_LOGIT = 3 * FP32_BYTES
# torchtitan with TP computes the loss under `loss_parallel` (vocabulary-sharded DTensor). Its backward
# (torch/distributed/tensor/parallel/loss.py `_nll_loss_and_log_softmax_backward`) evaluates
# `(grad_input + torch.exp(x)) * grad_output` next to the saved fp32 log-softmax x: four fp32 tensors of
# the logits' size at once (measured with FSDPMemTracker, tests/oracle).
LOSS_PARALLEL_CROSS_ENTROPY_BYTES_PER_LOGIT = 4 * FP32_BYTES
# Megatron `vocab_parallel_cross_entropy` (megatron/core/tensor_parallel/cross_entropy.py): an fp32
# copy of the bf16 logits, exp'ed in place and saved as the softmax; the backward writes the gradient
# into that same buffer. Peak: bf16 logits + fp32 softmax (forward) or fp32 grad + its bf16 cast.
MEGATRON_CROSS_ENTROPY_BYTES_PER_LOGIT = BF16_BYTES + FP32_BYTES

# --- runtime overheads, reported as `other` (not tensors of the model) ----------------------------
# CUDA context + kernel images + cuBLAS workspaces, per process. With lazy module loading
# (CUDA_MODULE_LOADING=LAZY, the default since CUDA 11.7 / PyTorch 1.13) NVIDIA documents the
# context at a few hundred MB (CUDA C++ Programming Guide, "Lazy Loading"); PyTorch's FAQ ("My GPU
# memory isn't freed properly") and torch.cuda.memory docs note it is outside the caching
# allocator. We take 0.75 GiB, the usual figure on H100 with cuBLAS/cuDNN/NCCL loaded.
CUDA_CONTEXT_BYTES = int(0.75 * GIB)
# NCCL allocates per communicator, outside PyTorch's allocator: NCCL_BUFFSIZE (4 MiB default, NCCL
# docs "Environment Variables") per channel and direction for the Simple protocol, plus LL/LL128
# buffers. ~16 channels × 2 directions × 4 MiB = 128 MiB per communicator in use.
NCCL_BYTES_PER_COMMUNICATOR = 128 * MIB
# PyTorch's caching allocator reserves more than it hands out (block rounding, split segments):
# torch.cuda.max_memory_reserved / max_memory_allocated is typically 1.05–1.15 in LLM training
# (PyTorch "CUDA semantics: memory management"; torchtitan and Megatron logs report both). We take
# 10 % of the tensor peak, recorded as `other`.
ALLOCATOR_FRAGMENTATION_FRACTION = 0.10

# --- nanotron (huggingface/nanotron main, as the Ultra-Scale Playbook sweep ran it) -----------------
# The sweep's configs set accumulate_grad_in_fp32=True (nanotron scripts/scaling_benchmarks.py), so
# nanotron's FP32GradientAccumulator (src/nanotron/optim/gradient_accumulator.py) keeps one fp32
# gradient buffer for *every* parameter of the rank, also under ZeRO-1 ("we need to accumulate
# gradients for all parameters without having to reduce in every accumulation step"), and an fp32
# copy of the parameters it updates (sharded over DP under ZeRO-1, like AdamW's moments).
NANOTRON_FP32_GRAD_BUFFER_BYTES = FP32_BYTES
# The model is wrapped in torch DistributedDataParallel (its comm hook does the fp32 accumulation),
# whose gradient buckets are a second bf16 copy of the gradients (gradient_as_bucket_view=False).
NANOTRON_DDP_BUCKET_BYTES = BF16_BYTES
# Each micro-batch's backward writes bf16 `.grad` tensors, which the accumulator adds into the fp32
# buffer and frees only after the whole backward (FP32GradientAccumulator.backward): at the end of a
# backward the rank holds a bf16 gradient of every parameter.
NANOTRON_HALF_GRAD_BYTES = BF16_BYTES
# Loss: nanotron's `sharded_cross_entropy(sharded_logits, ..., dtype=torch.float)`
# (src/nanotron/parallel/tensor_parallel/functional.py): the bf16 vocabulary-sharded logits, their
# fp32 copy, the shifted fp32 logits exp'ed in place and saved as the softmax: 2 + 4 + 4 bytes per logit.
NANOTRON_CROSS_ENTROPY_BYTES_PER_LOGIT = BF16_BYTES + 2 * FP32_BYTES
# Saved activations per micro-batch in flight, relative to the tensor-by-tensor count of
# activations.py (FITTED, not derived): the Ultra-Scale Playbook sweep's measured peaks
# (torch.cuda.max_memory_allocated, 466 runs) exceed the count by a share that grows with the
# micro-batches in flight (deep pipelines: -40 % at PP 16 without it), whatever the TP or model width.
# One factor fitted by least |relative error| over the sweep (benchmarks/fit_nanotron_memory.py).
# The mechanism is not identified (candidates: the pipeline engine's received/sent activation
# buffers, nanotron's unfused rotary and q/k/v reshapes keeping copies).
NANOTRON_SAVED_ACTIVATION_FACTOR = 1.68  # fitted: Playbook MAPE 24 % -> 12 % (held-out groups 8 %)
