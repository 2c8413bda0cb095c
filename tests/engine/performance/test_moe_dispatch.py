"""Expert dispatch and combine per MoE layer (engine/performance/ep.py, moe_routing.py), each
dispatcher checked against a hand calculation written out here.

Set-up shared by the hand calculations: DeepSeek-V3's MoE shape (hidden h = 7168, E = 256 routed
experts, top-k = 8, n_group = 8, topk_group = 4; HF config.json), one micro-batch of T = 4096 tokens,
TP = 1, EP = 64 on nodes of 8 GPUs (8 nodes), links with round numbers and an achievable fraction of 1:
NVLink 200 GB/s (H800: 400 GB/s both directions, datasheet), one 50 GB/s NDR NIC per GPU, latencies
3 µs / 10 µs.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.model_catalog import get_model
from shardwise.engine.performance.ep import ep_time_per_moe_layer, exposed_after_overlap, overlap_allowed
from shardwise.engine.performance.moe_routing import units_reached
from shardwise.engine.plans import PlanGrid
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

NVLINK = NetworkSpec(id="nvlink4-h800", name="NVLink (H800)", bandwidth_gbs=200, latency_us=3.0)
IB = NetworkSpec(id="ib-ndr", name="IB NDR", bandwidth_gbs=50, latency_us=10.0)
GPU = GPUSpec(id="h800", name="H800", memory_gib=80, bf16_tflops=989, fp8_tflops=1979, hbm_bandwidth_gbs=3350,
              intra_node=NVLINK)
CLUSTER = Cluster(gpu=GPU, num_gpus=2048, gpus_per_node=8, network=IB)
ASSUME = replace(DEFAULT_ASSUMPTIONS, bandwidth_fraction={**DEFAULT_ASSUMPTIONS.bandwidth_fraction,
                                                         "nvlink": 1.0, "infiniband": 1.0})
V3 = get_model("deepseek-v3")
H, T = 7168, 4096.0
NIC, NVL = 50e9, 200e9


def _grid(**plan) -> PlanGrid:
    return PlanGrid.from_strategy(Strategy(**{"tp": 1, "pp": 16, "ep": 64, **plan}), CLUSTER.num_gpus, 15360)


def _ep(setup: TrainingSetup, window=None, **plan) -> float:
    grid = _grid(**plan)
    return float(ep_time_per_moe_layer(V3, CLUSTER, setup, grid, np.array([T]), ASSUME,
                                       None if window is None else np.array([window]))[0])


def _miss(total: int, held: int, k: int) -> float:
    """Hypergeometric: none of k picks (without replacement) among `held` of `total`."""
    return prod((total - held - i) / (total - i) for i in range(k))


def test_catalog_reads_deepseek_group_limited_routing():
    """DeepSeek-V3 config.json: n_group 8, topk_group 4 (report sec. 2.1.2: at most 4 nodes per token)."""
    assert (V3.moe.n_group, V3.moe.topk_group) == (8, 4)
    assert V3.moe.group_limited


def test_node_limited_routing_reaches_at_most_topk_group_nodes():
    """EP = 64 over 8 nodes: each node holds one group of 32 experts; a token picks 4 groups (nodes),
    then 8 experts among their 128: expected distinct nodes = 4·(1 − C(96,8)/C(128,8))."""
    expected = 4 * (1 - _miss(128, 32, 8))
    assert units_reached(V3.moe, np.array([8.0]))[0] == pytest.approx(expected)
    assert expected < 4  # never more than topk_group nodes
    # Without the group limit the same 8 picks land on 8·(1 − C(224,8)/C(256,8)) of 8 nodes.
    free = V3.moe.model_copy(update={"n_group": 1, "topk_group": 1})
    assert units_reached(free, np.array([8.0]))[0] == pytest.approx(8 * (1 - _miss(256, 32, 8)))


def test_alltoall_sends_every_routed_copy_in_bf16():
    """Megatron's alltoall dispatcher: T·k·h·2 bytes per pass; 56 of 64 peers are off-node and go
    through the 50 GB/s NIC, 7 on-node over NVLink; the slower share decides:
    per pass 10 µs·ceil(log2 64) + (56/64)·4096·8·7168·2 / 50e9; 4 passes (2 forward, 2 backward)."""
    per_pass = 10e-6 * 6 + 56 / 64 * T * 8 * H * 2 / NIC
    assert _ep(TrainingSetup(precision="fp8")) == pytest.approx(4 * per_pass)


def test_allgather_gathers_the_group_whatever_top_k():
    """Megatron's allgather dispatcher: an all-gather of all 64 ranks' tokens and a reduce-scatter
    back, (n−1)/n·S each with S = 64·T·h·2 bytes, on a ring that drives the node's 8 NICs
    (8·50 GB/s, capped by NVLink's 200 GB/s): 2 collectives forward and 2 backward, each a ring of
    n−1 = 63 steps of which nodes−1 = 7 cross IB (10 µs) and 56 stay on NVLink (3 µs), as NCCL's
    latency model counts them (src/graph/tuning.cc): 56·3 + 7·10 = 238 µs."""
    full = 64 * T * H * 2
    one = (56 * 3e-6 + 7 * 10e-6) + 63 / 64 * full / min(8 * NIC, NVL)
    assert _ep(TrainingSetup(moe_dispatcher="allgather")) == pytest.approx(4 * one)


def test_deepep_one_copy_per_node_fp8_dispatch_bf16_combine():
    """DeepEP normal kernels (DeepSeek-V3 sec. 3.2.2): a token crosses IB once per destination node
    other than its own — D·(N−1)/N copies, D = 4·(1 − C(96,8)/C(128,8)), N = 8 — then NVLink
    forwards it to the distinct ranks holding its experts, R·7/8 copies with
    R = 32·(1 − C(124,8)/C(128,8)) (4 experts per rank, 32 eligible ranks). IB and NVLink are
    pipelined: max of the two, plus one 10 µs network latency.
    FP8 training: the forward dispatch and the backward of the combine carry 1 + 4/128 bytes per
    element (E4M3 + one fp32 scale per 128, sec. 3.3); the forward combine and the backward of the
    dispatch carry 2 (BF16)."""
    d_nodes = 4 * (1 - _miss(128, 32, 8)) * 7 / 8
    r_ranks = 32 * (1 - _miss(128, 4, 8)) * 7 / 8

    def one(b):
        return 10e-6 + max(T * d_nodes * H * b / NIC, T * r_ranks * H * b / NVL)

    fp8 = 1 + 4 / 128
    assert _ep(TrainingSetup(precision="fp8", moe_dispatcher="deepep")) == pytest.approx(2 * one(fp8) + 2 * one(2))
    # BF16 training sends all four passes in BF16.
    assert _ep(TrainingSetup(precision="bf16", moe_dispatcher="deepep")) == pytest.approx(4 * one(2))
    # Here the network is the bottleneck: ~3.2 node copies per token instead of ~7 routed copies off-node.
    assert T * d_nodes * H / NIC > T * r_ranks * H / NVL


def test_deepep_inside_one_node_uses_nvlink_only():
    """EP = 8 on one node: no network copies. Each rank holds one group of 32 experts, so a token
    reaches at most topk_group = 4 ranks: R = 4·(1 − C(96,8)/C(128,8)); NVLink copies R·7/8,
    latency 3 µs (NVLink); BF16 training: 4 passes of T·R·7/8·h·2 / 200 GB/s."""
    r = 4 * (1 - _miss(128, 32, 8)) * 7 / 8
    one = 3e-6 + T * r * H * 2 / NVL
    assert _ep(TrainingSetup(moe_dispatcher="deepep"), ep=8) == pytest.approx(4 * one)


def test_full_recompute_repeats_the_forward_dispatch_and_combine():
    """Full recompute reruns each MoE layer's forward: 6 passes instead of 4 (alltoall, all BF16)."""
    s = TrainingSetup()
    assert _ep(s, recompute="full") == pytest.approx(_ep(s) * 6 / 4)


def test_overlap_hides_behind_the_other_microbatch_and_costs_sms():
    """Megatron-Core's --overlap-moe-expert-parallel-comm: 3 s of communication beside a 2 s window
    exposes 1 s, and the 2 s that overlap take 20 of 132 SMs (DeepSeek-V3 sec. 3.2.2; H800 has 132):
    1 + 2·20/132. Communication shorter than the window costs only its SM share: 1·20/132."""
    assert exposed_after_overlap(np.array([3.0]), np.array([2.0]), 132)[0] == pytest.approx(1 + 2 * 20 / 132)
    assert exposed_after_overlap(np.array([1.0]), np.array([2.0]), 132)[0] == pytest.approx(20 / 132)


def test_overlap_follows_megatron_cores_conditions():
    """TransformerConfig: EP > 1, alltoall or flex dispatcher, no full recompute, VPP > 1 when PP > 1."""
    on = TrainingSetup(moe_dispatcher="deepep", moe_a2a_overlap=True)
    assert not overlap_allowed(on, _grid(pp=16))[0]  # DeepSeek's published PP16 without VPP
    assert overlap_allowed(on, _grid(pp=16, vpp=2))[0]
    assert overlap_allowed(on, _grid(pp=1))[0]
    assert not overlap_allowed(on, _grid(pp=1, recompute="full"))[0]
    assert not overlap_allowed(on.model_copy(update={"moe_dispatcher": "allgather"}), _grid(pp=1))[0]
    assert not overlap_allowed(TrainingSetup(moe_dispatcher="deepep"), _grid(pp=1))[0]
    # Applied: with a window longer than the communication only the SM share remains.
    comm = _ep(TrainingSetup(moe_dispatcher="deepep"), pp=1)
    hidden = _ep(on, window=10.0, pp=1)
    assert hidden == pytest.approx(comm * 20 / 132)
