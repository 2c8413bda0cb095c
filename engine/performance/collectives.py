"""Alpha-beta times of NCCL collectives (Thakur, Rabenseifner & Gropp 2005; NCCL's
"bus bandwidth" convention, nccl-tests doc/PERFORMANCE.md).

For n ranks, S bytes per rank and bus bandwidth B:
  all-reduce (ring)      2·(n−1)/n · S / B
  reduce-scatter, all-gather  (n−1)/n · S / B     (S = the full, unsharded buffer)
  all-to-all             (n−1)/n · S over the rank's links (off-node share through its NIC)
  point-to-point         S / B
Latency: NCCL switches to tree/NVLS algorithms for latency-bound sizes, so we charge
2·ceil(log2 n) steps for an all-reduce and ceil(log2 n) for the halves, not the ring's 2(n−1).
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


def reduce_scatter_time(nbytes: np.ndarray, g: GroupLinks) -> np.ndarray:
    n = g.size
    t = _log_steps(n) * g.latency + (n - 1) / np.maximum(n, 1) * nbytes / g.ring_bandwidth
    return np.where(n > 1, t, 0.0)


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
