"""Where a parallel group's ranks sit, and which link its collectives run on.

Ranks are laid out like Megatron-Core's default order (parallel_state, "tp-cp-ep-dp-pp"):
TP innermost (stride 1), then CP (stride tp), then DP (stride tp·cp), PP outermost
(stride tp·cp·dp). Expert layers use their own layout: ETP innermost, then EP (stride etp),
then expert-DP. A group of `size` ranks spaced `stride` apart stays inside one node when
size·stride <= gpus_per_node; otherwise it crosses node boundaries and its traffic leaves
through the NICs, which are shared by every group of that node communicating at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions.network import DEFAULT_LATENCY_US
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster


@dataclass(frozen=True)
class GroupLinks:
    """Per-plan link properties of one parallel group (arrays over the PlanGrid)."""

    size: np.ndarray  # ranks in the group
    crosses_nodes: np.ndarray  # bool
    members_per_node: np.ndarray  # ranks of this group inside one node
    ring_bandwidth: np.ndarray  # bytes/s a ring collective sustains per rank (bus bandwidth)
    nic_bandwidth: np.ndarray  # bytes/s of one rank's own share of the node's NICs (all-to-all, p2p)
    intra_bandwidth: float  # bytes/s of the intra-node link (achievable)
    latency: np.ndarray  # seconds per step (the network's when the group crosses nodes)
    intra_latency: np.ndarray | float | None = None  # seconds per step on the intra-node link (None: = latency)


def group_links(cluster: Cluster, size: np.ndarray, stride: np.ndarray, assume: PerformanceAssumptions) -> GroupLinks:
    g = cluster.gpus_per_node
    size = np.asarray(size, dtype=np.int64)
    stride = np.asarray(stride, dtype=np.int64)
    crosses = (size * stride > g) & (size > 1)
    # Members of the group that share a node: g // stride of them when the stride is below the node size.
    per_node = np.clip(np.where(stride < g, g // np.maximum(stride, 1), 1), 1, np.maximum(size, 1))
    intra = cluster.gpu.intra_node
    inter = cluster.network
    intra_bw = intra.bandwidth_gbs * 1e9 * assume.link_fraction(intra)
    nic_bw = inter.bandwidth_gbs * 1e9 * assume.link_fraction(inter)
    # NCCL rings cross a node boundary through one NIC per channel and spread channels over the
    # NICs its ranks own: k members per node drive k NICs, so the bus bandwidth is k·NIC, capped
    # by the intra-node link (each rank also forwards over NVLink).
    ring_bw = np.where(crosses, np.minimum(per_node * nic_bw, intra_bw), intra_bw)
    intra_lat = (intra.latency_us or DEFAULT_LATENCY_US) * 1e-6
    inter_lat = (inter.latency_us or DEFAULT_LATENCY_US) * 1e-6
    latency = np.where(crosses, inter_lat, intra_lat)
    return GroupLinks(size=size, crosses_nodes=crosses, members_per_node=per_node, ring_bandwidth=ring_bw,
                      nic_bandwidth=np.where(crosses, nic_bw, intra_bw), intra_bandwidth=intra_bw, latency=latency,
                      intra_latency=intra_lat)


def tp_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    return group_links(cluster, grid.tp, np.ones_like(grid.tp), assume)


def cp_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    return group_links(cluster, grid.cp, grid.tp, assume)


def dp_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    """Gradients of dense weights are reduced over DP and CP together (Megatron's dp-cp group)."""
    return group_links(cluster, grid.dp * grid.cp, grid.tp, assume)


def pp_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    return group_links(cluster, grid.pp, grid.tp * grid.cp * grid.dp, assume)


def ep_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    return group_links(cluster, grid.ep, grid.etp, assume)


def expert_dp_group(cluster: Cluster, grid, assume: PerformanceAssumptions) -> GroupLinks:
    return group_links(cluster, grid.expert_dp, grid.etp * grid.ep, assume)
