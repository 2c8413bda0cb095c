"""nanotron's ZeRO-0 per-tensor ring latency, against hand calculations (docs/performance.md,
"Planning for nanotron").

nanotron's DDP comm hook reduces every bucket's fp32 gradients with dist.all_reduce_coalesced
(src/nanotron/optim/gradient_accumulator.py `get_fp32_accum_hook`); PyTorch runs that as one
ncclAllReduce per tensor (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp `allreduce_coalesced`).
A ring all-reduce over n ranks takes 2(n-1) steps (Thakur, Rabenseifner & Gropp 2005; NCCL
src/graph/tuning.cc `nsteps = 2*(nRanks-1)`). Exposed extra time per step:

    tensors on the stage × 2(n-1) × ZERO0_ALL_REDUCE_S_PER_RING_STEP_TENSOR

with 6 tensors per layer (qkv_proj, o_proj, gate_up_proj, down_proj, two RMSNorm weights;
src/nanotron/models/llama.py), n = DP·CP, only when the ring leaves the node."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance import step_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B

CLUSTER = Cluster(gpu=H100, num_gpus=64, gpus_per_node=8, network=IB)
NANOTRON = TrainingSetup(seq_len=4096, global_batch=256, framework="nanotron")


def _step(zero: int, per_step_s: float, setup: TrainingSetup = NANOTRON, pp: int = 1, tp: int = 2,
          cluster: Cluster = CLUSTER) -> float:
    assume = replace(DEFAULT_ASSUMPTIONS, zero0_ring_step_per_tensor={"nanotron": per_step_s})
    grid = PlanGrid.build(cluster.num_gpus, 256, tp=[tp], pp=[pp], zero_stage=[zero], micro_batch=[1])
    return float(step_time(LLAMA3_8B, cluster, setup, grid, assume).step[0])


def test_zero0_ring_steps_by_hand():
    """Llama-3-8B (32 layers) on 64 GPUs, 8 per node, 3 µs per step and tensor.
    TP 2, PP 1: DP 32 (spans all 8 nodes), 32 × 6 = 192 tensors, 2 × 31 = 62 steps each:
    192 × 62 × 3 µs = 35.712 ms more per step.
    TP 2, PP 2: DP 16, 16 layers per stage = 96 tensors, 2 × 15 = 30 steps: 96 × 30 × 3 µs = 8.64 ms."""
    assert _step(0, 3e-6) - _step(0, 0.0) == pytest.approx(192 * 62 * 3e-6, rel=1e-9)
    assert _step(0, 3e-6, pp=2) - _step(0, 0.0, pp=2) == pytest.approx(96 * 30 * 3e-6, rel=1e-9)


def test_only_zero0_rings_that_leave_the_node_pay():
    # ZeRO-1 reduces one contiguous buffer (a single all-reduce): no per-tensor rings.
    assert _step(1, 3e-6) == _step(1, 0.0)
    # DP 4 × TP 2 = 8 GPUs on one 8-GPU node: the ring stays on NVLink.
    one_node = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
    assert _step(0, 3e-6, cluster=one_node) == _step(0, 0.0, cluster=one_node)
    # Megatron reduces its contiguous gradient buckets, not tensor by tensor.
    megatron = NANOTRON.model_copy(update={"framework": "megatron"})
    assert _step(0, 3e-6, setup=megatron) == _step(0, 0.0, setup=megatron)
