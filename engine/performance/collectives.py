"""Alpha-beta times of NCCL collectives (Thakur, Rabenseifner & Gropp 2005; NCCL's
"bus bandwidth" convention, nccl-tests doc/PERFORMANCE.md).

For n ranks, S bytes per rank and bus bandwidth B:
  all-reduce (ring)      2·(n−1)/n · S / B
  reduce-scatter, all-gather  (n−1)/n · S / B     (S = the full, unsharded buffer)
  all-to-all             (n−1)/n · S over the rank's links (off-node share through its NIC)
  point-to-point         S / B
Latency: an all-reduce can switch to NCCL's tree (or NVLS) algorithm for latency-bound sizes, so
it is charged 2·ceil(log2 n) steps, not the ring's 2(n−1). All-gather and reduce-scatter have no
tree algorithm in NCCL (Ring, plus NVLS/CollNet on specific hardware and PAT only with one GPU per
node), so they pay the ring's n−1 steps; NCCL's own latency model (src/graph/tuning.cc,
ncclTopoTuneModel) counts nsteps = nRanks−1 of which nInterSteps = nNodes−1 cross the network
(hwLat NET) and the rest stay on NVLink (hwLat NVLINK). The links' latencies are those per-hop
values (engine/data/hardware.json).
"""

from __future__ import annotations

import numpy as np

from .topology import GroupLinks


def _log_steps(n: np.ndarray) -> np.ndarray:
    return np.ceil(np.log2(np.maximum(n, 1)))


def all_reduce_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    n = g.size
    t = 2 * _log_steps(n) * g.latency + 2 * (n - 1) / np.maximum(n, 1) * nbytes / g.ring_bandwidth
    return np.where(n > 1, t, 0.0)


def ring_latency(g: GroupLinks) -> np.ndarray:
    """Seconds of step latency of one ring all-gather or reduce-scatter over the group: n−1 steps,
    nodes−1 of them over the network, the others over the intra-node link (NCCL tuning.cc)."""
    n = np.maximum(g.size, 1)
    nodes = np.where(g.crosses_nodes, -(-n // np.maximum(g.members_per_node, 1)), 1)
    inter_steps = nodes - 1
    intra_steps = n - 1 - inter_steps
    intra = g.latency if g.intra_latency is None else np.where(g.crosses_nodes, g.intra_latency, g.latency)
    return np.where(g.size > 1, intra_steps * intra + inter_steps * g.latency, 0.0)


def ring_transfer_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    """The bandwidth term of a ring all-gather or reduce-scatter: (n−1)/n · S / B."""
    n = g.size
    return np.where(n > 1, (n - 1) / np.maximum(n, 1) * nbytes / g.ring_bandwidth, 0.0)


def reduce_scatter_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    return ring_latency(g) + ring_transfer_time(nbytes, g)


all_gather_time = reduce_scatter_time


def all_to_all_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    """Each rank sends (n−1)/n of its S bytes: the peers on its node over the intra-node link,
    the others through its own NIC share; both proceed at once, the slower one decides."""
    n = np.maximum(g.size, 1)
    k = g.members_per_node
    on_node = (k - 1) / n * nbytes / g.intra_bandwidth
    off_node = (n - k) / n * nbytes / g.nic_bandwidth
    t = g.latency * _log_steps(n) + np.maximum(on_node, off_node)
    return np.where(g.size > 1, t, 0.0)


def p2p_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    """One send/receive between neighbouring ranks of the group."""
    return np.where(g.size > 1, g.latency + nbytes / g.nic_bandwidth, 0.0)
