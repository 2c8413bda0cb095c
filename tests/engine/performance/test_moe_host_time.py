"""The exposed host time of a dropless MoE layer (assumptions/moe.py), against a hand calculation:
per MoE layer and micro-batch, MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S × local experts in the forward
pass and twice that in backward (ELEMENTWISE_BACKWARD_RATIO = 2); none under full-iteration CUDA
graphs, and none on dense layers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.performance.compute import microbatch_compute
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

QWEN3_30B = get_model("Qwen3-30B-A3B")  # 128 routed experts (Qwen3-30B-A3B config.json: num_experts 128)
SETUP = TrainingSetup(seq_len=4096, global_batch=512, precision="fp8")


def _moe_layer(per_expert_s: float, ep: list[int]):
    grid = PlanGrid.build(8, 512, ep=ep)
    assume = replace(DEFAULT_ASSUMPTIONS, moe_host_time_per_expert_fwd=per_expert_s)
    return microbatch_compute(QWEN3_30B, build_cluster("b200", 8), SETUP, grid, assume)


def test_host_time_per_local_expert_forward_and_twice_in_backward():
    """100 µs per local expert. EP 8: 128/8 = 16 local experts → 1.6 ms forward, 3.2 ms backward,
    4.8 ms per MoE layer per micro-batch. EP 4: 32 local experts → 9.6 ms."""
    with_host, without = _moe_layer(100e-6, [8, 4]), _moe_layer(0.0, [8, 4])
    d_fwd = with_host.moe_layer.forward - without.moe_layer.forward
    d_bwd = with_host.moe_layer.backward - without.moe_layer.backward
    assert d_fwd == pytest.approx([1.6e-3, 3.2e-3])
    assert d_bwd == pytest.approx([3.2e-3, 6.4e-3])
    assert with_host.moe_layer.total - without.moe_layer.total == pytest.approx([4.8e-3, 9.6e-3])
    np.testing.assert_allclose(with_host.dense_layer.total, without.dense_layer.total)  # dense layers pay nothing


def test_full_iteration_cuda_graphs_remove_it():
    """The setup's full-iteration graphs (assumptions/cuda_graphs.py) zero it; per-layer graphs keep it."""
    grid = PlanGrid.build(8, 512, ep=[8])
    cluster = build_cluster("b200", 8)
    times = {g: microbatch_compute(QWEN3_30B, cluster, SETUP.model_copy(update={"cuda_graphs": g}), grid,
                                   DEFAULT_ASSUMPTIONS).moe_layer.total[0] for g in ("none", "per-layer", "full-iteration")}
    host = DEFAULT_ASSUMPTIONS.moe_host_time_per_expert_fwd * 16 * 3  # 128/8 local experts, forward + 2x backward
    assert DEFAULT_ASSUMPTIONS.moe_host_time_per_expert_fwd > 0.0  # fitted, see docs/performance.md
    assert times["per-layer"] == times["none"]
    assert times["none"] - times["full-iteration"] == pytest.approx(host)
