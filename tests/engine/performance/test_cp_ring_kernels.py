"""Context-parallel ring attention: the kernels the ring adds, by hand.

Transformer Engine's AttnFuncWithCPAndKVP2P (context_parallel.py) runs the attention of a CP
rank as one kernel per ring step and merges each later step's partial result into the running
one (softmax-LSE correction, output correction): three more kernels per extra step forward,
and in backward the attention backward plus the gradient accumulations, again three. None of
them is hidden by the K/V exchange's overlap. Of each three, the attention kernel pays the large
kernels' fixed cost and the two corrections the small kernels' launch gap (E10)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance.cp import cp_time_per_layer
from shardwise.engine.plans import PlanGrid

from support.hand_specs import H100, IB, LLAMA3_8B

KERNEL_S = 20e-6  # a round large-kernel cost, set for the test
SMALL_KERNEL_S = 5e-6  # a round small-kernel cost, set for the test


def _cp_layer(cp: list[int], recompute: list[int]) -> np.ndarray:
    cluster = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(8, 8, cp=cp, recompute=recompute)
    assume = replace(DEFAULT_ASSUMPTIONS, kernel_fixed_s=KERNEL_S, small_kernel_fixed_s=SMALL_KERNEL_S)
    tokens = np.full(len(cp), 8192.0) / np.asarray(cp)
    # An attention core of 1 s per layer hides any K/V exchange of an 8k sequence over NVLink
    # (a few MB at hundreds of GB/s), so what is left is the ring's kernels alone.
    return cp_time_per_layer(LLAMA3_8B, cluster, grid, tokens, np.full(len(cp), 1.0), assume)


def test_ring_kernels_per_layer_by_hand():
    """Per extra step and direction: 1 attention kernel × 20 µs + 2 corrections × 5 µs = 30 µs.
    cp=4: 3 extra steps × 30 µs = 90 µs forward, 90 µs backward -> 180 µs; with full recompute
    the forward runs again: 270 µs. cp=2: 1 × 30 µs × 2 = 60 µs. No CP: nothing."""
    t = _cp_layer(cp=[4, 4, 2, 1], recompute=[0, 2, 0, 0])
    assert t == pytest.approx([180e-6, 270e-6, 60e-6, 0.0])


def test_cp_no_longer_ties_plain_data_parallelism():
    """The same tokens per GPU split by CP=2 instead of DP: the ring's kernels make CP the slower
    one when it is not needed for memory (before, the two were priced identically)."""
    from shardwise.engine.performance import step_time
    from shardwise.engine.training import TrainingSetup

    cluster = Cluster(gpu=H100, num_gpus=16, gpus_per_node=8, network=IB)
    setup = TrainingSetup(seq_len=8192, global_batch=64)
    grid = PlanGrid.build(16, 64, tp=[1, 1], cp=[2, 1], micro_batch=[2, 1], zero_stage=[1, 1])
    t = step_time(LLAMA3_8B, cluster, setup, grid)
    assert t.cp_comm[0] > 0 and t.cp_comm[1] == 0
    assert t.step[0] > t.step[1]
