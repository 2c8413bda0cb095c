"""Mixture-of-experts dispatch and memory assumptions, each with its source.

None of these is fitted except the MoE host time (marked FITTED below): the others are read from
the papers and code of the systems that run them.
Some Megatron-Bridge MoE rows are scored with the dispatcher and overlap their perf recipe ran
(calibration/data/bridge_moe_recipes.csv), but too few to pin the dispatch values; they stay
first-principles (docs/performance.md, "Expert dispatch").
"""

from __future__ import annotations

from . import calibrated

# --- Wire formats of the expert all-to-all -------------------------------------------------
# DeepEP's FP8 dispatch sends each token as E4M3 (1 byte per element) plus one fp32 scale per
# 128 elements (DeepSeek-V3 report, arXiv:2412.19437, sec. 3.3.1 fine-grained 1x128 tile
# quantisation; DeepEP README: "dispatch: FP8, combine: BF16"; deep_ep Buffer.dispatch takes
# `x` as (fp8 tensor, scales [tokens, hidden/128] float32)).
FP8_DISPATCH_BYTES_PER_ELEMENT = 1.0 + 4.0 / 128
# The combine (and every gradient path but one) stays BF16: DeepSeek-V3 sec. 3.3.2 quantises
# the activation before the MoE up-projection (forward dispatch) and the activation gradient
# before the MoE down-projection (backward of the combine) to FP8; "both the forward and
# backward combine components are retained in BF16".
BF16_BYTES = 2.0
# Per MoE layer and micro-batch: forward dispatch, forward combine, backward of the combine
# (a dispatch of gradients) and backward of the dispatch (a combine of gradients).
FP8_PASSES_PER_LAYER = 2  # forward dispatch, backward of the combine (only when training in FP8)
BF16_PASSES_PER_LAYER = 2  # forward combine, backward of the dispatch

# --- Overlap of the expert all-to-all with compute ------------------------------------------
# SMs the communication kernels occupy while they run beside compute: DeepSeek-V3 sec. 3.2.2
# ("only 20 SMs are sufficient to fully utilize the bandwidths of IB and NVLink"); Megatron-Core
# sets the same default for DeepEP (TransformerConfig.moe_deepep_num_sms = 20). NCCL's all-to-all
# uses its channels, one SM each; we charge the same 20.
EP_COMM_SMS = 20
# Streaming multiprocessors per GPU, by generation (NVIDIA H100 SXM5 / H800: 132; B200: 148;
# A100: 108 — the architecture whitepapers). Unknown generations use DEFAULT_SMS.
SMS_BY_GENERATION: dict[str, int] = {"ampere": 108, "hopper": 132, "blackwell": 148}
DEFAULT_SMS = 132

# --- Host time of a dropless MoE layer ------------------------------------------------------
# A dropless MoE layer cannot be launched ahead of the GPU: its dispatcher copies the routed
# token counts to the host (Megatron-Core token_dispatcher.py: the all-to-all splits and the
# grouped GEMM's m_splits are Python lists, `tokens_per_expert.cpu()`; the flex/DeepEP path
# likewise waits for the received-token count), so every MoE layer drains the launch queue and
# the kernels after the sync — expert quantisation and the grouped GEMMs, which Transformer
# Engine's GroupedLinear issues per local expert, permutation, combine — are exposed at the
# host's pace instead of hiding behind the GPU's. Charged per MoE layer, micro-batch and local
# expert in the forward pass, twice that in backward (compute.py's ELEMENTWISE_BACKWARD_RATIO),
# on top of the GPU time. FITTED (benchmarks/fit_calibration.py --only moe_host_per_expert_us,
# the other constants fixed, held-out groups excluded) on the Megatron-Bridge MoE rows: 71 µs,
# i.e. ~5 launches of ~15 µs per local expert (quantise, GEMM, activation, quantise, GEMM). A
# fixed per-layer part was fitted alongside and came out at 0, so it was dropped. Zero for runs
# captured as one full-iteration CUDA graph (Bridge's full_iteration recipes size the expert
# buffers from a rank capacity, so nothing syncs and nothing is launched from the host): the
# setup option TrainingSetup.cuda_graphs, assumptions/cuda_graphs.py and docs/performance.md
# ("MoE host time", "CUDA graphs").
MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S: float = calibrated.MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S

# --- Memory ---------------------------------------------------------------------------------
# Tokens the busiest expert rank holds relative to a perfectly balanced one. 1.0 = balanced:
# the Megatron-Bridge benchmarks force balance (moe_router_force_load_balancing), and DeepSeek-V3's
# auxiliary-loss-free balancing plus node-limited routing keeps the per-batch load near uniform
# (report sec. 2.1.2; no per-rank maximum is published). Raise it to size for dropless routing
# under imbalance: the expert activations scale with it.
MOE_ROUTING_IMBALANCE_HEADROOM = 1.0

# --- DeepEP communication buffers (deep_ep/buffers/legacy.py, csrc/legacy/config.hpp) ----------
# Megatron-Core allocates one DeepEP Buffer per EP group, sized by DeepEP's own hints for the
# dispatch and combine configs (the larger of the two), for hidden_bytes = hidden · max(2, element
# size). Per-EP-size configs (Buffer.get_dispatch_config / get_combine_config): NVLink and RDMA
# receive-buffer tokens per channel; channels = num_sms / 2.
DEEPEP_NVL_PEERS = 8  # LEGACY_NUM_MAX_NVL_PEERS: GPUs of one node the NVLink buffers address
DEEPEP_NVL_RECV_TOKENS: dict[int, int] = {2: 256, 4: 256, 8: 256, 16: 288, 24: 288, 32: 288, 48: 288, 64: 288,
                                          96: 480, 128: 560, 144: 720, 160: 720}
DEEPEP_RDMA_RECV_TOKENS = 128  # every config above: 128 (aligned to its send chunk)
DEEPEP_MAX_TOPK = 128  # kNumMaxTopK: top-k slots reserved per token
DEEPEP_MAX_SCALES = 128  # kNumMaxScales: FP8 scale slots per token
DEEPEP_SOURCE_META_BYTES = 8  # sizeof(SourceMeta): two ints
DEEPEP_TOPK_IDX_BYTES = 8  # topk_idx_t as int64 (Megatron passes int64 indices)
