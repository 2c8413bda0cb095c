"""nanotron's ZeRO-1 terms, against hand calculations (docs/performance.md, "Planning for nanotron").

nanotron's ZeroDistributedOptimizer all-gathers the updated shards with all_gather_coalesced, which
copies each DP rank's gathered buffer back into every parameter tensor from Python
(src/nanotron/distributed.py `update_output`): DP × tensors `copy_` launches per step, priced at
ZERO1_GATHER_HOST_S_PER_RANK_TENSOR each, with 6 tensors per layer (qkv_proj, o_proj, gate_up_proj,
down_proj, two RMSNorm weights; src/nanotron/models/llama.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance import step_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B, NVLINK

CLUSTER = Cluster(gpu=H100, num_gpus=64, gpus_per_node=8, network=IB)
NANOTRON = TrainingSetup(seq_len=4096, global_batch=256, framework="nanotron")


def _step(zero: int, per_copy_s: float, setup: TrainingSetup = NANOTRON, pp: int = 1) -> float:
    assume = replace(DEFAULT_ASSUMPTIONS, zero1_gather_host_per_rank_tensor={"nanotron": per_copy_s})
    grid = PlanGrid.build(64, 256, tp=[2], pp=[pp], zero_stage=[zero], micro_batch=[1])
    return float(step_time(LLAMA3_8B, CLUSTER, setup, grid, assume).step[0])


def test_zero1_gather_copies_by_hand():
    """TP 2 on 64 GPUs, PP 1: DP 32, 32 layers × 6 = 192 tensors; 10 µs per copy:
    32 × 192 × 10 µs = 61.44 ms more per step. PP 2: DP 16, 16 layers per stage (96 tensors):
    16 × 96 × 10 µs = 15.36 ms."""
    assert _step(1, 10e-6) - _step(1, 0.0) == pytest.approx(32 * 192 * 10e-6, rel=1e-9)
    assert _step(1, 10e-6, pp=2) - _step(1, 0.0, pp=2) == pytest.approx(16 * 96 * 10e-6, rel=1e-9)


def test_zero0_and_other_frameworks_pay_no_gather_copies():
    assert _step(0, 10e-6) == _step(0, 0.0)
    megatron = NANOTRON.model_copy(update={"framework": "megatron"})
    assert _step(1, 10e-6, setup=megatron) == _step(1, 0.0, setup=megatron)


def test_zero1_overlap_is_its_own_and_defaults_to_the_frameworks():
    """dp_overlap_zero1 applies to ZeRO-1/2 only; a framework without an entry uses its dp_overlap."""
    a = replace(DEFAULT_ASSUMPTIONS, dp_overlap={**DEFAULT_ASSUMPTIONS.dp_overlap, "nanotron": 0.3},
                dp_overlap_zero1={})
    assert a.dp_overlap_zero1_for("nanotron") == 0.3
    b = replace(a, dp_overlap_zero1={"nanotron": 0.9})
    assert b.dp_overlap_zero1_for("nanotron") == 0.9 and b.dp_overlap_for("nanotron") == 0.3
    grid0 = PlanGrid.build(64, 256, tp=[2], zero_stage=[0], micro_batch=[1])
    assert step_time(LLAMA3_8B, CLUSTER, NANOTRON, grid0, a).step[0] == step_time(LLAMA3_8B, CLUSTER, NANOTRON, grid0, b).step[0]
