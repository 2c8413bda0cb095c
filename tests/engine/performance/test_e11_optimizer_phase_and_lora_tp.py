"""Engine candidate E11, by hand: the Megatron-family optimizer phase (performance/optimizer_phase.py) and
LoRA's backward TP overlap limited to the data-gradient GEMMs (performance/tp.py).

H100 (tests/support/hand_specs.py): HBM 3,350 GB/s. The tests set HBM efficiency 0.5 and the phase constant
30 ms themselves, so the expected values do not depend on the fitted constants."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance import step_time
from shardwise.engine.performance.dp import ShardedParams
from shardwise.engine.performance.optimizer_phase import optimizer_phase_time
from shardwise.engine.performance.tp import tp_time_per_layer
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B

ASSUME = replace(DEFAULT_ASSUMPTIONS, hbm_efficiency=0.5, optimizer_phase_fixed={"megatron": 0.030})
HBM = 3350e9 * 0.5  # bytes/s
CLUSTER = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
ONE_BILLION = ShardedParams(dense=np.array([1e9]), expert=np.array([0.0]))


def test_phase_bytes_and_constant_fp8_distributed_optimizer():
    """DP 8, ZeRO-1: 1e9 local parameters, 1.25e8 owned. Zeroing the rest of the FP32 main-grad buffer:
    (1e9 − 1.25e8) × 4 B = 3.5e9 B; FP8 re-quantisation of every local weight: 1e9 × 5 B = 5e9 B.
    8.5e9 B / 1,675 GB/s = 5.0746 ms, plus the 30 ms constant."""
    grid = PlanGrid.build(8, 8, zero_stage=1)
    setup = TrainingSetup(precision="fp8", framework="megatron")
    t = optimizer_phase_time(CLUSTER, setup, grid, ONE_BILLION, 4, ASSUME)
    assert t == pytest.approx([8.5e9 / HBM + 0.030])
    assert 8.5e9 / HBM == pytest.approx(5.0746e-3, rel=1e-4)


def test_phase_without_fp8_and_without_sharding():
    """BF16, ZeRO-1: only the zeroing, 3.5e9 B / 1,675 GB/s = 2.0896 ms + 30 ms. BF16 grad buffer (2 B): half
    the bytes. ZeRO-0: the optimizer owns every local parameter, its AdamW bytes already zero the buffer: 30 ms."""
    setup = TrainingSetup(precision="bf16", framework="megatron")
    zero1 = optimizer_phase_time(CLUSTER, setup, PlanGrid.build(8, 8, zero_stage=1), ONE_BILLION, 4, ASSUME)
    assert zero1 == pytest.approx([3.5e9 / HBM + 0.030])
    bf16_grads = optimizer_phase_time(CLUSTER, setup, PlanGrid.build(8, 8, zero_stage=1), ONE_BILLION, 2, ASSUME)
    assert bf16_grads == pytest.approx([1.75e9 / HBM + 0.030])
    zero0 = optimizer_phase_time(CLUSTER, setup, PlanGrid.build(8, 8, zero_stage=0), ONE_BILLION, 4, ASSUME)
    assert zero0 == pytest.approx([0.030])


@pytest.mark.parametrize("setup", [TrainingSetup(mode="lora", framework="megatron"),
                                   TrainingSetup(framework="fsdp"), TrainingSetup(framework="deepspeed"),
                                   TrainingSetup(framework="nanotron")])
def test_no_phase_for_lora_or_frameworks_without_evidence(setup):
    """LoRA freezes the base (no main gradients); FSDP/DeepSpeed/nanotron have no constant: 0 s."""
    t = optimizer_phase_time(CLUSTER, setup, PlanGrid.build(8, 8, zero_stage=1), ONE_BILLION, 4, ASSUME)
    assert t == pytest.approx([0.0])


def test_step_reports_the_phase_inside_the_optimizer_term():
    """Raising the constant from 0 to 30 ms adds exactly 30 ms to the optimizer-phase term and to the step,
    and nothing to AdamW's optimizer term; a LoRA step does not move."""
    grid = PlanGrid.build(8, 64, tp=[1, 2], zero_stage=1)
    none = replace(ASSUME, optimizer_phase_fixed={"megatron": 0.0})
    for mode, added in (("full", 0.030), ("lora", 0.0)):
        setup = TrainingSetup(seq_len=4096, global_batch=64, framework="megatron", mode=mode)
        a = step_time(LLAMA3_8B, CLUSTER, setup, grid, none)
        b = step_time(LLAMA3_8B, CLUSTER, setup, grid, ASSUME)
        assert b.optimizer_phase - a.optimizer_phase == pytest.approx([added, added])
        assert b.step - a.step == pytest.approx([added, added])
        assert b.optimizer == pytest.approx(a.optimizer)


def test_lora_backward_hides_half_the_tp_collectives_full_hides():
    """TP 2 over NVLink, overlap f = 0.8, t one all-reduce-equivalent, 2 forward + 2 backward per layer.
    Full: (1 − 0.8)·4t = 0.8t. LoRA: (1 − 0.8)·2t + (1 − 0.8 × 1/2)·2t = 0.4t + 1.2t = 1.6t: twice full's.
    Embedding/logits (2t, forward): 0.4t for both. With overlap 0 both are 4t: unchanged."""
    grid = PlanGrid.build(8, 8, tp=2, recompute=0)
    tokens = np.array([8192.0])
    for f, ratio in ((0.8, 2.0), (0.0, 1.0)):
        assume = replace(DEFAULT_ASSUMPTIONS, tp_overlap={"megatron": f})
        full_setup = TrainingSetup(framework="megatron")
        full, full_ends = tp_time_per_layer(LLAMA3_8B, CLUSTER, full_setup, grid, tokens, assume)
        lora, lora_ends = tp_time_per_layer(LLAMA3_8B, CLUSTER, TrainingSetup(framework="megatron", mode="lora"),
                                            grid, tokens, assume)
        assert lora == pytest.approx(ratio * full)
        assert lora_ends == pytest.approx(full_ends)
