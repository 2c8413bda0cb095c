"""Data-parallel gradient synchronisation and ZeRO/FSDP parameter gathers.

ZeRO-0 (DDP): all-reduce the gradients once per step. ZeRO-1/2 (Megatron's distributed
optimizer, DeepSpeed stage 1/2): reduce-scatter the gradients, all-gather the updated
parameters — the same bytes as one all-reduce (Rajbhandari et al. 2020). ZeRO-3/FSDP:
all-gather every layer's parameters for forward and again for backward, and reduce-scatter
its gradients, on every micro-batch. HSDP adds an all-reduce of the sharded gradients across
replicas. Dense weights sync over DP×CP; expert weights over the expert-data-parallel group.

Overlap (ZeRO 0-2): gradients accumulate over the step's micro-batches, so the reduction can start only
in the LAST micro-batch's backward, bucket by bucket as the buckets fill (Li et al. 2020, "PyTorch
Distributed", VLDB, sec. 3.2.3; Megatron-Core overlap_grad_reduce). With B equal buckets (share f = 1/B of
the reduction time R each) ready at k·T/B of a backward of T and reduced one after another, the last one
finishes at max(T + R/B, T/B + R): exposed = max(f·R, R − (1 − f)·T). The last bucket (the first layers'
gradients) is never hidden; the rest hides behind at most the (1 − f)·T of backward that follows the first
bucket, of which DP_OVERLAP_FRACTION (fitted) is usable. The parameter gather mirrors it before the next
forward (Megatron --overlap-param-gather): the first bucket is needed before the first layer runs.
ZeRO-3 hides behind the current micro-batch's compute by prefetching. Only what does not fit is exposed. A framework that
reduces ZeRO-0 gradients with one all-reduce per parameter tensor also pays the rings' step latency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions import network as n
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..plans import PlanGrid
from .collectives import all_gather_time, all_reduce_time, reduce_scatter_time, ring_latency, ring_transfer_time
from .topology import GroupLinks, dp_group, expert_dp_group, group_links


@dataclass(frozen=True)
class ShardedParams:
    """Trainable parameters held by one GPU before any ZeRO sharding (its TP/PP/EP share)."""

    dense: np.ndarray
    expert: np.ndarray


def _sync_once(params: np.ndarray, links: GroupLinks, zero: np.ndarray,
               all_reduce_grads: bool = False, grad_bytes: float = n.GRAD_REDUCE_BYTES,
               gather_bytes: float = n.PARAM_GATHER_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """(gradient reduction, parameter gather) times for ZeRO 0-2, once per step."""
    grads = params * grad_bytes
    full = all_reduce_time(grads, links)
    reduce = full if all_reduce_grads else np.where(zero == 0, full, reduce_scatter_time(grads, links))
    gather = np.where(zero == 0, 0.0, all_gather_time(params * gather_bytes, links))
    has = params > 0
    return np.where(has, reduce, 0.0), np.where(has, gather, 0.0)


def _zero3_per_microbatch(params: np.ndarray, links: GroupLinks, units: np.ndarray,
                          grad_bytes: float = n.GRAD_REDUCE_BYTES,
                          gather_bytes: float = n.PARAM_GATHER_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, of which ring-step latency) of one micro-batch's ZeRO-3 traffic: every one of `units`
    FSDP units (one per layer) all-gathers its parameters for forward and again for backward and
    reduce-scatters its gradients, each collective a ring that pays its own step latency."""
    transfer = 2 * ring_transfer_time(params * gather_bytes, links) + ring_transfer_time(params * grad_bytes, links)
    latency = n.FSDP_COLLECTIVES_PER_LAYER_ZERO3 * np.maximum(units, 1) * ring_latency(links)
    has = params > 0
    return np.where(has, transfer + latency, 0.0), np.where(has, latency, 0.0)


def dp_exposed_time(cluster: Cluster, grid: PlanGrid, params: ShardedParams, layers_per_stage: np.ndarray,
                    mb_forward: np.ndarray, mb_backward: np.ndarray, assume: PerformanceAssumptions,
                    framework: str = "megatron", grad_bytes: float = n.GRAD_REDUCE_BYTES,
                    gather_bytes: float = n.PARAM_GATHER_BYTES) -> np.ndarray:
    """Exposed seconds per step. mb_forward/mb_backward: one micro-batch's compute on this rank.
    grad_bytes / gather_bytes: the wire formats of the gradient reduction and the parameter gather."""
    zero = grid.zero_stage
    overlap = np.where(zero >= 1, assume.dp_overlap_zero1_for(framework), assume.dp_overlap_for(framework))
    replicas = np.maximum(grid.hsdp_replicas, 1)
    dense_links = dp_group(cluster, grid, assume)
    shard_links = group_links(cluster, np.maximum(grid.dp * grid.cp // replicas, 1), grid.tp, assume)
    replica_links = group_links(cluster, replicas, grid.tp * np.maximum(grid.dp * grid.cp // replicas, 1), assume)
    expert_links = expert_dp_group(cluster, grid, assume)
    zero3_links = _choose(replicas > 1, shard_links, dense_links)

    # ZeRO 0-2: once per step, overlapped with the last backward / the next forward.
    all_reduce = assume.zero_grads_all_reduced.get(framework, False)
    reduce_d, gather_d = _sync_once(params.dense, dense_links, zero, all_reduce, grad_bytes, gather_bytes)
    reduce_e, gather_e = _sync_once(params.expert, expert_links, zero, all_reduce, grad_bytes, gather_bytes)
    reduce, gather = reduce_d + reduce_e, gather_d + gather_e
    bucket = bucket_share(params, grid, framework)
    exposed_reduce = pipelined_bucket_exposure(reduce, overlap * mb_backward, bucket)
    exposed_gather = pipelined_bucket_exposure(gather, overlap * mb_forward, bucket)
    # nanotron's ZeRO-1 copies the gathered shards back tensor by tensor, per DP rank (assumption).
    tensors = n.ZERO1_GATHER_TENSORS_PER_LAYER * layers_per_stage
    gather_copies = np.where((zero >= 1) & (zero <= 2),
                             assume.zero1_gather_host_for(framework) * grid.dp * grid.cp * tensors, 0.0)
    # A framework that all-reduces ZeRO-0 gradients tensor by tensor pays each ring's 2(n-1) steps
    # per tensor when the ring leaves the node (nanotron's DDP hook; assumption, see network.py).
    ring = grid.dp * grid.cp
    ring_steps = np.where((zero == 0) & dense_links.crosses_nodes & (params.dense > 0),
                          n.PARAM_TENSORS_PER_LAYER * layers_per_stage * 2 * (ring - 1), 0)
    # PyTorch FSDP's SHARD_GRAD_OP (its ZeRO-2) gathers and reduce-scatters layer by layer on every
    # micro-batch; the unhidden share of those rings' step latency (assumption, network.py).
    exposed_latency = assume.fsdp_ring_latency_exposed_for(framework)
    zero2_rings = np.where((zero == 2) & (params.dense > 0),
                           n.FSDP_COLLECTIVES_PER_LAYER_ZERO2 * layers_per_stage * ring_latency(dense_links), 0.0)
    once = (exposed_reduce + exposed_gather + gather_copies + assume.zero0_ring_step_for(framework) * ring_steps
            + grid.num_microbatches * exposed_latency * zero2_rings)

    # ZeRO-3/FSDP: every micro-batch, prefetched behind that micro-batch's compute; the first
    # layer's gather of each pass cannot be prefetched, and part of every ring's step latency is
    # not hidden at all (FSDP_RING_LATENCY_EXPOSED_FRACTION).
    dense_mb, dense_lat = _zero3_per_microbatch(params.dense, zero3_links, layers_per_stage, grad_bytes, gather_bytes)
    expert_mb, expert_lat = _zero3_per_microbatch(params.expert, expert_links, layers_per_stage, grad_bytes,
                                                  gather_bytes)
    unhidden = exposed_latency * (dense_lat + expert_lat)
    hideable = dense_mb + expert_mb - unhidden
    first_layer = hideable / np.maximum(layers_per_stage, 1)
    exposed_mb = unhidden + np.maximum(hideable - assume.fsdp_overlap * (mb_forward + mb_backward), first_layer)
    hsdp = np.where(replicas > 1, all_reduce_time(params.dense / replicas * grad_bytes, replica_links), 0.0)
    zero3 = grid.num_microbatches * exposed_mb + pipelined_bucket_exposure(hsdp, overlap * mb_backward, bucket)

    total = np.where(zero == 3, zero3, once)
    return np.where((grid.dp * grid.cp > 1) | (grid.expert_dp > 1), total, 0.0)


def bucket_share(params: ShardedParams, grid: PlanGrid, framework: str) -> np.ndarray:
    """Share f of the gradients in one bucket (the last one is always exposed). Megatron-Core sizes its buckets
    max(40M, 1M × data-parallel size with CP) elements (network.py); other frameworks use the fixed size."""
    size = n.DP_BUCKET_PARAMS
    if framework == "megatron":
        size = np.maximum(size, n.DP_BUCKET_PARAMS_PER_DP_RANK * grid.dp * grid.cp)
    return np.minimum(1.0, size / np.maximum(params.dense + params.expert, 1.0))


def pipelined_bucket_exposure(total: np.ndarray, window: np.ndarray, bucket: np.ndarray) -> np.ndarray:
    """Exposed seconds of `total` seconds of bucketed communication that starts as the buckets fill during
    `window` seconds of usable compute: max(f·total, total − (1 − f)·window), f = one bucket's share."""
    return np.maximum(bucket * total, total - (1.0 - bucket) * window)


def _choose(mask: np.ndarray, a: GroupLinks, b: GroupLinks) -> GroupLinks:
    per_cluster = ("intra_bandwidth", "intra_latency")  # properties of the cluster, equal in both
    return GroupLinks(**{f: (np.where(mask, getattr(a, f), getattr(b, f)) if f not in per_cluster else getattr(a, f))
                         for f in a.__dataclass_fields__})
