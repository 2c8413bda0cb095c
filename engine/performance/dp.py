"""Data-parallel gradient synchronisation and ZeRO/FSDP parameter gathers.

ZeRO-0 (DDP): all-reduce the gradients once per step. ZeRO-1/2 (Megatron's distributed
optimizer, DeepSpeed stage 1/2): reduce-scatter the gradients, all-gather the updated
parameters — the same bytes as one all-reduce (Rajbhandari et al. 2020). ZeRO-3/FSDP:
all-gather every layer's parameters for forward and again for backward, and reduce-scatter
its gradients, on every micro-batch. HSDP adds an all-reduce of the sharded gradients across
replicas. Dense weights sync over DP×CP; expert weights over the expert-data-parallel group.

Overlap: gradient buckets are reduced while backward continues, so everything but the last
bucket can hide behind the last micro-batch's backward; parameter gathers hide behind the next
forward (Megatron --overlap-param-gather) or, for ZeRO-3, behind the current micro-batch's
compute by prefetching. Only what does not fit the overlap window is exposed. A framework that
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
    bucket = np.minimum(1.0, n.DP_BUCKET_PARAMS / np.maximum(params.dense + params.expert, 1.0))
    exposed_reduce = np.maximum(reduce - overlap * mb_backward, bucket * reduce)
    exposed_gather = np.maximum(gather - overlap * mb_forward, bucket * gather)
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
    zero3 = grid.num_microbatches * exposed_mb + np.maximum(hsdp - overlap * mb_backward, bucket * hsdp)

    total = np.where(zero == 3, zero3, once)
    return np.where((grid.dp * grid.cp > 1) | (grid.expert_dp > 1), total, 0.0)


def _choose(mask: np.ndarray, a: GroupLinks, b: GroupLinks) -> GroupLinks:
    per_cluster = ("intra_bandwidth", "intra_latency")  # properties of the cluster, equal in both
    return GroupLinks(**{f: (np.where(mask, getattr(a, f), getattr(b, f)) if f not in per_cluster else getattr(a, f))
                         for f in a.__dataclass_fields__})
