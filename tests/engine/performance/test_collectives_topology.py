"""Alpha-beta collective times and Megatron rank placement, checked against hand calculations."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance.collectives import (all_gather_time, all_reduce_time, all_to_all_time, p2p_time,
                                                      reduce_scatter_time)
from shardwise.engine.performance.topology import GroupLinks, group_links

from support.hand_specs import H100 as GPU, IB, NVLINK

CLUSTER = Cluster(gpu=GPU, num_gpus=64, gpus_per_node=8, network=IB)


def links(size, bandwidth, latency, per_node=None, nic=None) -> GroupLinks:
    size = np.array([size])
    return GroupLinks(size=size, crosses_nodes=np.array([False]), members_per_node=np.array([per_node or size[0]]),
                      ring_bandwidth=np.array([bandwidth]), nic_bandwidth=np.array([nic or bandwidth]),
                      intra_bandwidth=bandwidth, latency=np.array([latency]))


def test_ring_all_reduce_by_hand():
    """1 GiB over 8 ranks at 100 GB/s bus bandwidth, 5 µs per step:
    bandwidth term 2·7/8·2^30 / 1e11 = 0.018790 s; latency 2·ceil(log2 8)·5 µs = 30 µs."""
    t = all_reduce_time(np.array([2.0**30]), links(8, 100e9, 5e-6))
    assert t[0] == pytest.approx(2 * 7 / 8 * 2**30 / 100e9 + 30e-6)


def test_reduce_scatter_and_all_gather_are_half_an_all_reduce():
    """RS and AG each move (n−1)/n·S (Thakur et al. 2005); together they are one all-reduce."""
    g = links(16, 50e9, 0.0)
    s = np.array([4e9])
    assert reduce_scatter_time(s, g)[0] == pytest.approx(15 / 16 * 4e9 / 50e9)
    assert all_gather_time(s, g)[0] + reduce_scatter_time(s, g)[0] == pytest.approx(all_reduce_time(s, g)[0])


def test_single_rank_groups_cost_nothing():
    g = links(1, 50e9, 5e-6)
    s = np.array([1e9])
    assert all_reduce_time(s, g)[0] == 0 and all_to_all_time(s, g)[0] == 0 and p2p_time(s, g)[0] == 0


def test_all_to_all_splits_on_and_off_node_traffic():
    """16 ranks, 8 per node, 1.6 GB per rank: 7/16 of it on NVLink (at 400 GB/s), 8/16 through the
    rank's NIC (40 GB/s): max(0.7 GB/400, 0.8 GB/40) = 0.02 s (+ 4 latency steps of 10 µs)."""
    g = GroupLinks(size=np.array([16]), crosses_nodes=np.array([True]), members_per_node=np.array([8]),
                   ring_bandwidth=np.array([320e9]), nic_bandwidth=np.array([40e9]), intra_bandwidth=400e9,
                   latency=np.array([10e-6]))
    assert all_to_all_time(np.array([1.6e9]), g)[0] == pytest.approx(0.8e9 / 40e9 + 4 * 10e-6)


def test_megatron_placement_tp_inside_node_dp_across():
    """64 GPUs, 8 per node, TP=8 (stride 1) stays on NVLink; its DP group (stride 8, 8 ranks) puts one
    rank per node and crosses nodes through one NIC each; TP=2 leaves DP with 4 ranks per node,
    which drive 4 NICs: ring bandwidth 4·50·f_IB, capped by NVLink."""
    a = DEFAULT_ASSUMPTIONS
    nv = 450e9 * a.link_fraction(NVLINK)
    nic = 50e9 * a.link_fraction(IB)
    tp = group_links(CLUSTER, np.array([8]), np.array([1]), a)
    assert not tp.crosses_nodes[0] and tp.ring_bandwidth[0] == pytest.approx(nv)
    dp = group_links(CLUSTER, np.array([8]), np.array([8]), a)
    assert dp.crosses_nodes[0] and dp.members_per_node[0] == 1 and dp.ring_bandwidth[0] == pytest.approx(nic)
    dp4 = group_links(CLUSTER, np.array([32]), np.array([2]), a)
    assert dp4.members_per_node[0] == 4 and dp4.ring_bandwidth[0] == pytest.approx(min(4 * nic, nv))


def test_group_that_fits_a_node_stays_on_nvlink():
    """CP=2 with stride TP=4 spans 8 consecutive ranks: one node."""
    cp = group_links(CLUSTER, np.array([2]), np.array([4]), DEFAULT_ASSUMPTIONS)
    assert not cp.crosses_nodes[0]
