"""Network assumptions: achievable bandwidth per link tier, latencies, and what overlaps.

Collectives are timed with the alpha-beta model (Hockney; Thakur et al. 2005 for the ring
algorithms): time = steps · latency + bytes_on_the_wire / (bandwidth · ACHIEVABLE_FRACTION).
The link's datasheet bandwidth and latency come from the NetworkSpec; the fraction a
collective sustains is a property of the link kind and lives here.

Values marked "calibrated" are fitted by `benchmarks/fit_calibration.py` (see compute.py)
and live in `calibrated.py`.
"""

from __future__ import annotations

from ..hardware import NetworkSpec
from . import calibrated

# Link kinds, recognised from the NetworkSpec id.
KIND_BY_ID_PREFIX: dict[str, str] = {
    "nvlink": "nvlink", "nvl": "nvlink", "nvswitch": "nvlink", "infinity-fabric": "nvlink", "xgmi": "nvlink",
    "ib": "infiniband", "infiniband": "infiniband",
    "roce": "roce",
    "efa": "efa", "aws-efa": "efa",
    "eth": "ethernet", "ethernet": "ethernet", "tcp": "ethernet",
    "pcie": "pcie",
}


def link_kind(network: NetworkSpec) -> str:
    """'nvlink' | 'infiniband' | 'roce' | 'efa' | 'ethernet' | 'pcie' | 'other'."""
    ident = network.id.lower()
    for prefix in sorted(KIND_BY_ID_PREFIX, key=len, reverse=True):
        if ident.startswith(prefix):
            return KIND_BY_ID_PREFIX[prefix]
    return "other"


# Fraction of the per-GPU datasheet bandwidth that NCCL's bus bandwidth reaches for large
# messages, by link kind. NVLink and InfiniBand are calibrated; the others are assumptions:
# RoCE typically runs ~10 % below IB in nccl-tests, TCP Ethernet ~50 % of line rate, PCIe
# peer-to-peer ~70 %. AWS EFA is calibrated on the Ultra-Scale Playbook sweep (the HF cluster).
ACHIEVABLE_BANDWIDTH_FRACTION: dict[str, float] = {
    "nvlink": calibrated.NVLINK_BANDWIDTH_FRACTION,
    "infiniband": calibrated.INFINIBAND_BANDWIDTH_FRACTION,
    "roce": calibrated.INFINIBAND_BANDWIDTH_FRACTION * 0.9,
    "efa": calibrated.EFA_BANDWIDTH_FRACTION,
    "ethernet": 0.5,
    "pcie": 0.7,
    "other": 0.5,
}

# --- What overlaps with compute -----------------------------------------------------------
# Share of the data-parallel gradient reduction hidden behind the last micro-batch's backward
# (Megatron --overlap-grad-reduce, PyTorch DDP/FSDP buckets): everything but the last bucket
# can overlap, at the rate the overlap window allows (calibrated).
# By framework: Megatron (--overlap-grad-reduce / --overlap-param-gather), PyTorch FSDP/DDP
# buckets, DeepSpeed (overlap_comm); "nanotron" is the Playbook's framework: ZeRO-0 assumed 1 from its source
# (its DDP hook's async all_reduce_coalesced; benchmarks/fit_calibration.py DP_OVERLAP_NANOTRON_ZERO0).
DP_OVERLAP_FRACTION: dict[str, float] = calibrated.DP_OVERLAP_FRACTION
# The same share for ZeRO-1/2, where a framework's sharded path overlaps differently (calibrated;
# frameworks not listed use DP_OVERLAP_FRACTION). nanotron: under ZeRO-0 its DDP comm hook starts an
# asynchronous all_reduce_coalesced per bucket during backward; under ZeRO-1 the hook runs nanotron's
# reduce_scatter_coalesced, which first flattens every bucket once per DP rank on the host
# (src/nanotron/distributed.py, optim/gradient_accumulator.py), so the two overlap differently.
DP_OVERLAP_FRACTION_ZERO1: dict[str, float] = getattr(calibrated, "DP_OVERLAP_FRACTION_ZERO1", {})
# Host time per (DP rank × parameter tensor) after a ZeRO-1 optimizer step (calibrated, nanotron
# only). nanotron's ZeroDistributedOptimizer all-gathers the updated shards with
# all_gather_coalesced, which then copies each of the DP gathered buffers back into every parameter
# tensor from Python (`update_output`: DP × tensors `copy_` calls, src/nanotron/distributed.py): the
# step waits for DP × tensors small kernel launches. In the Ultra-Scale Playbook sweep ZeRO-1 measured
# 0.71-0.89× ZeRO-0's throughput on 256 GPUs (DP 32-256), which bandwidth alone does not explain.
ZERO1_GATHER_HOST_S_PER_RANK_TENSOR: dict[str, float] = getattr(calibrated, "ZERO1_GATHER_HOST_S_PER_RANK_TENSOR", {})
# Parameter tensors per transformer layer in nanotron's Llama (qkv_proj, o_proj, gate_up_proj,
# down_proj and two RMSNorm weights, src/nanotron/models/llama.py): what the ZeRO-1 gather copies
# into, and how many gradient all-reduces its ZeRO-0 DDP hook issues per layer (below).
PARAM_TENSORS_PER_LAYER = 6
ZERO1_GATHER_TENSORS_PER_LAYER = PARAM_TENSORS_PER_LAYER
# Exposed latency per ring step per gradient tensor of a ZeRO-0 gradient all-reduce that crosses
# nodes (calibrated, nanotron only). nanotron's DDP comm hook reduces each bucket's fp32 gradient
# buffers with dist.all_reduce_coalesced (src/nanotron/optim/gradient_accumulator.py
# `get_fp32_accum_hook`), which PyTorch runs as one ncclAllReduce per tensor
# (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp `allreduce_coalesced` -> collectiveCoalesced);
# a ring all-reduce over n ranks takes 2(n-1) steps (Thakur et al. 2005; NCCL src/graph/tuning.cc
# counts nsteps = 2·(nRanks-1)). So the step pays about tensors × 2(n-1) × this, on top of the
# bandwidth term. One average per step: NCCL's own latency model charges the network latency on
# 2·nNodes of those steps and the NVLink one on the rest; the sweep cannot separate the two. Fitted on the Ultra-Scale Playbook
# sweep (benchmarks/fit_calibration.py) as exposed: the sweep's ZeRO-0 runs pay it even when the
# last micro-batch's backward is long enough to hide it (e.g. 1B, 64 GPUs, TP2 mb8: 0.54 s measured,
# 0.42 s with the all-reduce hidden); why the latency does not overlap is not identified.
# In the sweep ZeRO-0 lost 0.07-0.16 s per step from 2 to 32 nodes at DP 16-256 (1B, TP1, mb1),
# which the bandwidth term (~0.05 s, hidden) does not explain.
ZERO0_ALL_REDUCE_S_PER_RING_STEP_TENSOR: dict[str, float] = getattr(
    calibrated, "ZERO0_ALL_REDUCE_S_PER_RING_STEP_TENSOR", {})
# Gradient bucket, in parameters: Megatron's DDP default is max(40M, 1M·dp) elements; the last
# bucket is always exposed.
DP_BUCKET_PARAMS = 40_000_000
# ... and grows with the data-parallel group: Megatron-Core's DistributedDataParallel sets bucket_size =
# max(40_000_000, 1_000_000 × DP size including CP) when none is given (megatron/core/distributed/
# distributed_data_parallel.py), so each rank's reduce-scatter chunk stays large enough.
DP_BUCKET_PARAMS_PER_DP_RANK = 1_000_000
# ZeRO-3/FSDP: share of the per-micro-batch parameter all-gathers and gradient reduce-scatters
# hidden behind that micro-batch's compute by prefetching (calibrated).
FSDP_OVERLAP_FRACTION: float = calibrated.FSDP_OVERLAP_FRACTION
# Share of the ring-step latency of PyTorch FSDP's per-layer collectives that prefetching does not
# hide (calibrated, "fsdp" only). FSDP wraps each transformer block as one unit (llm-foundry's
# fsdp_wrap_fn, torchtitan's fully_shard per block), so a micro-batch issues one all-gather per unit
# for forward and one for backward (FULL_SHARD) and one reduce-scatter: 3·layers collectives, 2·layers
# under SHARD_GRAD_OP. Each is a NCCL ring of n−1 steps (collectives.ring_latency). In the MosaicML
# llm-foundry H100 tables at 128-512 GPUs (pure FSDP, weak scaling, fixed micro-batch) the measured
# step grows linearly in n while the modelled compute and bandwidth terms are flat: from one doubling
# to the next MPT-1b/3b/7b grow by 0.55-0.8 of the growth of those collectives' summed ring latency
# (the catalog's per-hop 3.4 us NVLink / 9.6 us InfiniBand, NCCL's hwLat); fitted on all runs: 0.90
# (docs/performance.md, "FSDP at scale"). Why prefetching hides the bandwidth but not the latency is not identified (candidates:
# every ring step is a synchronisation of all n ranks that waits for the slowest, and the NCCL kernel
# holds its SMs through the latency-bound steps); nanotron's per-tensor ZeRO-0 rings show the same
# (ZERO0_ALL_REDUCE_S_PER_RING_STEP_TENSOR ~ 3.5 us, NCCL's NVLink per-step latency). Frameworks not
# listed: 0 (Megatron's FSDP and DeepSpeed ZeRO-3 bucket differently; no scaling series to fit them on).
FSDP_RING_LATENCY_EXPOSED_FRACTION: dict[str, float] = getattr(calibrated, "FSDP_RING_LATENCY_EXPOSED_FRACTION", {})
# FSDP collectives per layer and micro-batch whose ring latency the term above charges: FULL_SHARD
# (ZeRO-3) gathers for forward and backward and reduce-scatters; SHARD_GRAD_OP (ZeRO-2) keeps the
# gathered parameters from forward to backward (PyTorch FSDP ShardingStrategy docs).
FSDP_COLLECTIVES_PER_LAYER_ZERO3 = 3
FSDP_COLLECTIVES_PER_LAYER_ZERO2 = 2
# Tensor-parallel collectives overlapped with GEMMs. Megatron with Transformer Engine
# --tp-comm-overlap (userbuffers) and torchtitan's async TP hide part of them (calibrated, bounded
# at 0.85: the first gather and last reduce of a layer have no GEMM to hide behind); plain
# implementations hide none. Only within the NVLink domain: userbuffers need peer memory.
TP_OVERLAP_FRACTION: dict[str, float] = {
    "megatron": calibrated.TP_OVERLAP_FRACTION,
    "fsdp": 0.0,        # torchtitan: async TP is opt-in
    "deepspeed": 0.0,
}
# Context-parallel ring: K/V exchange of the next chunk runs while the current chunk's
# attention computes (Megatron/TE ring attention); this share of the attention time is
# available to hide it.
CP_OVERLAP_FRACTION = 0.9
# Expert-parallel all-to-all: Megatron-Core can overlap dispatch/combine with the other
# micro-batch's compute (--overlap-moe-expert-parallel-comm) but does not by default.
EP_OVERLAP_FRACTION = 0.0
# Pipeline point-to-point sends overlap with compute in Megatron's interleaved schedule
# (overlap_p2p_comm); for plain 1F1B they are on the critical path.
PP_P2P_OVERLAP_FRACTION_INTERLEAVED = 0.8
PP_P2P_OVERLAP_FRACTION_1F1B = 0.0

# How a framework's ZeRO-1/2 reduces gradients: Megatron's distributed optimizer, DeepSpeed and
# FSDP reduce-scatter them; so did nanotron as the Ultra-Scale Playbook sweep ran it (early 2025):
# under ZeRO-1 its DDP comm hook calls reduce_scatter_coalesced (get_fp32_accum_hook with
# reduce_scatter=optimizer.inherit_from(ZeroDistributedOptimizer), src/nanotron/helpers.py and
# optim/gradient_accumulator.py at 0e0a27e, 2025-02), then ZeroDistributedOptimizer all-gathers
# the updated shards (optim/zero.py). That branch raises NotImplementedError only since 7bc9923
# (2025-06-23, after the sweep). True here would mean a full all-reduce before the gather.
ZERO_GRADIENTS_ALL_REDUCED: dict[str, bool] = {"megatron": False, "fsdp": False, "deepspeed": False,
                                               "nanotron": False}

# --- Wire formats --------------------------------------------------------------------------
# Gradients are reduced in FP32 by default: Megatron sets accumulate_allreduce_grads_in_fp32
# for BF16 training, torchtitan's FSDP2 reduce_dtype defaults to float32.
GRAD_REDUCE_BYTES = 4
GRAD_REDUCE_BYTES_BF16 = 2  # Megatron --grad-reduce-in-bf16 (TrainingSetup.grad_reduce_dtype)
# Parameters are gathered (ZeRO-3/FSDP, distributed optimizer) in the compute dtype.
PARAM_GATHER_BYTES = 2
# torchtitan's float8 all-gather; Megatron FP8 param gather (TrainingSetup.fp8_param_gather), priced for all
# gathered parameters though norms, router and embeddings stay BF16 (a small under-count off the GEMMs).
PARAM_GATHER_BYTES_FP8 = 1

# Latency used when a NetworkSpec gives none (microseconds).
DEFAULT_LATENCY_US = 5.0
