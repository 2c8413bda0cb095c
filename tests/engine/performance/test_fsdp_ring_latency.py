"""Ring latency of all-gather / reduce-scatter and PyTorch FSDP's unhidden share of it, by hand
(engine/performance/collectives.py ring_latency, dp.py; assumptions in network.py).

NCCL has no tree algorithm for all-gather and reduce-scatter: its latency model
(src/graph/tuning.cc, ncclTopoTuneModel) charges a ring nsteps = nRanks−1 steps, of which
nInterSteps = nNodes−1 at the network's per-hop latency and the rest at NVLink's. The hand specs
(tests/support/hand_specs.py) use NVLink 3 µs and IB 10 µs per step.

FSDP wraps every transformer block as one unit: per micro-batch FULL_SHARD (ZeRO-3) issues per layer
an all-gather for forward, one for backward and a reduce-scatter (3 rings), SHARD_GRAD_OP (ZeRO-2)
2 rings. The share FSDP_RING_LATENCY_EXPOSED_FRACTION of their summed step latency is never hidden."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance import step_time
from shardwise.engine.performance.collectives import all_gather_time, ring_latency
from shardwise.engine.performance.topology import group_links
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B

CLUSTER = Cluster(gpu=H100, num_gpus=64, gpus_per_node=8, network=IB)
BIG = Cluster(gpu=H100, num_gpus=512, gpus_per_node=8, network=IB)
FSDP = TrainingSetup(seq_len=4096, global_batch=256, framework="fsdp")


def _links(cluster: Cluster, size: int, stride: int):
    return group_links(cluster, np.array([size]), np.array([stride]), DEFAULT_ASSUMPTIONS)


def test_ring_latency_by_hand():
    """512 ranks, 8 per node (64 nodes): 63 IB steps + 448 NVLink steps = 630 + 1344 = 1974 µs.
    8 ranks in one node: 7 NVLink steps = 21 µs. 8 ranks one per node (stride 8): 7 IB steps = 70 µs."""
    assert ring_latency(_links(BIG, 512, 1))[0] == pytest.approx(63 * 10e-6 + 448 * 3e-6)
    assert ring_latency(_links(CLUSTER, 8, 1))[0] == pytest.approx(7 * 3e-6)
    assert ring_latency(_links(CLUSTER, 8, 8))[0] == pytest.approx(7 * 10e-6)


def test_all_gather_is_ring_latency_plus_transfer():
    """1 GB gathered over 64 ranks (8 nodes × 8): 56·3 µs + 7·10 µs = 238 µs, plus 63/64 · 1e9 B over
    the ring's bus bandwidth (8 NICs' share, capped by NVLink: topology.group_links)."""
    g = _links(CLUSTER, 64, 1)
    expected = 238e-6 + 63 / 64 * 1e9 / g.ring_bandwidth[0]
    assert all_gather_time(np.array([1e9]), g)[0] == pytest.approx(expected)


def _step(zero: int, exposed: float, framework: str = "fsdp") -> float:
    assume = replace(DEFAULT_ASSUMPTIONS, fsdp_ring_latency_exposed={framework: exposed})
    grid = PlanGrid.build(CLUSTER.num_gpus, 256, tp=[1], pp=[1], zero_stage=[zero], micro_batch=[1])
    setup = FSDP.model_copy(update={"framework": framework})
    return float(step_time(LLAMA3_8B, CLUSTER, setup, grid, assume).step[0])


def test_fsdp_zero3_exposes_its_rings_latency_by_hand():
    """Llama-3-8B (32 layers), 64 GPUs, DP 64, mb 1, global batch 256: 4 micro-batches. Each rings
    238 µs (above); 3·32 = 96 rings per micro-batch. Half exposed: 0.5·96·238 µs per micro-batch, less
    the 1/32 of it that the unprefetchable first layer already exposed (its gather stays exposed
    either way): 4 · 0.5 · 96 · 238 µs · 31/32 = 44.268 ms more per step."""
    assert _step(3, 0.5) - _step(3, 0.0) == pytest.approx(4 * 0.5 * 96 * 238e-6 * 31 / 32, rel=1e-6)


def test_fsdp_shard_grad_op_exposes_two_rings_per_layer():
    """ZeRO-2 (SHARD_GRAD_OP): 2·32 rings per micro-batch: 4 · 0.5 · 64 · 238 µs = 30.464 ms."""
    assert _step(2, 0.5) - _step(2, 0.0) == pytest.approx(4 * 0.5 * 64 * 238e-6, rel=1e-6)


def test_other_frameworks_do_not_pay_it():
    """The fraction is PyTorch FSDP's: Megatron's ZeRO-3 is unchanged when the 'fsdp' entry is set."""
    assume = replace(DEFAULT_ASSUMPTIONS, fsdp_ring_latency_exposed={"fsdp": 0.5})
    grid = PlanGrid.build(CLUSTER.num_gpus, 256, tp=[1], pp=[1], zero_stage=[3], micro_batch=[1])
    megatron = FSDP.model_copy(update={"framework": "megatron"})
    base = float(step_time(LLAMA3_8B, CLUSTER, megatron, grid, DEFAULT_ASSUMPTIONS).step[0])
    assert float(step_time(LLAMA3_8B, CLUSTER, megatron, grid, assume).step[0]) == pytest.approx(base)
