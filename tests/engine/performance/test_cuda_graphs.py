"""What CUDA graphs remove from a step (assumptions/cuda_graphs.py), against hand calculations.

Full-iteration graphs remove the dropless MoE host time: per MoE layer and micro-batch,
MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S x local experts in forward and ELEMENTWISE_BACKWARD_RATIO = 2 times
that in backward (assumptions/moe.py), so with one pipeline stage and no data parallelism the step
shrinks by exactly micro-batches x MoE layers x local experts x 109 us x (1 + 2). Per-layer graphs leave
the experts eager (Megatron-Core cannot capture a dropless MoE layer), so the MoE host time stays.
Both remove the per-layer host floor of the layers they capture.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shardwise.engine.assumptions.compute import ELEMENTWISE_BACKWARD_RATIO, FULL_RECOMPUTE_HOST_FACTOR
from shardwise.engine.assumptions.moe import MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.performance.step import host_floor_kept, step_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

# Qwen3-30B-A3B config.json: num_hidden_layers 48, every layer MoE (decoder_sparse_step 1), num_experts 128.
QWEN3_30B = get_model("Qwen3-30B-A3B")


def _qwen_step(graphs: str):
    """One B200, EP 1 (all 128 experts local), PP 1, DP 1; global batch 8 at micro-batch 1 = 8 micro-batches."""
    setup = TrainingSetup(seq_len=4096, global_batch=8, precision="fp8", moe_dispatcher="deepep", cuda_graphs=graphs)
    return step_time(QWEN3_30B, build_cluster("b200", 1), setup, PlanGrid.build(1, 8))


def test_full_iteration_graphs_remove_exactly_the_moe_host_time():
    """8 micro-batches x 48 MoE layers x 128 local experts x 122.41 us x (1 + 2) = 18.05 s."""
    assert MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S == pytest.approx(122.41e-6, rel=1e-4)  # the fitted value
    expected = 8 * 48 * 128 * MOE_HOST_TIME_PER_LOCAL_EXPERT_FWD_S * (1 + ELEMENTWISE_BACKWARD_RATIO)
    assert expected == pytest.approx(49152 * 3 * 122.4139e-6, abs=1e-3)  # = 18.051
    eager, graphed = _qwen_step("none"), _qwen_step("full-iteration")
    assert eager.details["host_wait_s"][0] == graphed.details["host_wait_s"][0] == 0.0  # the host floor does not bind
    assert eager.dp_comm[0] == graphed.dp_comm[0] == 0.0 and eager.optimizer[0] == graphed.optimizer[0]
    assert eager.step[0] - graphed.step[0] == pytest.approx(expected, rel=1e-9)
    assert eager.compute[0] - graphed.compute[0] == pytest.approx(expected, rel=1e-9)


def test_per_layer_graphs_leave_a_dropless_moe_step_unchanged():
    """Every Qwen3-30B layer is MoE: per-layer graphs capture attention and the router only, the experts
    stay eager (MoE host time kept) and so does the layers' host floor."""
    assert _qwen_step("per-layer").step[0] == _qwen_step("none").step[0]


def _floor_step(graphs: str, recompute: str = "none", host_per_layer: float = 0.1):
    """Llama-3.2-1B (16 layers, config.json num_hidden_layers) on one H100, seq 128, 8 micro-batches,
    with the per-layer host time raised to `host_per_layer` so the floor binds."""
    assume = replace(DEFAULT_ASSUMPTIONS, host_time_per_layer={**DEFAULT_ASSUMPTIONS.host_time_per_layer,
                                                               "megatron": host_per_layer})
    grid = PlanGrid.build(1, 8, recompute=[{"none": 0, "full": 2}[recompute]])
    setup = TrainingSetup(seq_len=128, global_batch=8, cuda_graphs=graphs)
    return step_time(get_model("llama-3.2-1b"), build_cluster("h100-sxm", 1), setup, grid, assume)


@pytest.mark.parametrize("graphs", ["per-layer", "full-iteration"])
@pytest.mark.parametrize("recompute,factor", [("none", 1.0), ("full", FULL_RECOMPUTE_HOST_FACTOR)])
def test_graphs_remove_the_host_floor_of_a_dense_model(graphs, recompute, factor):
    """Eager: a micro-batch takes at least 16 layers x 0.1 s (x 1.5 with full recompute, which launches the
    forward twice) = 1.6 s (2.4 s); the host waits that minus the GPU time, 8 times. Graphed: no wait.
    (Per-layer graphs with full recompute are refused by validity/graphs.py; the time model is the same.)"""
    floor = 16 * 0.1 * factor
    eager, graphed = _floor_step("none", recompute), _floor_step(graphs, recompute)
    gpu_per_microbatch = graphed.details["microbatch_s"][0]
    assert gpu_per_microbatch < floor
    assert graphed.details["host_wait_s"][0] == 0.0
    assert eager.details["host_wait_s"][0] == pytest.approx(8 * (floor - gpu_per_microbatch), rel=1e-9)
    assert eager.step[0] - graphed.step[0] == pytest.approx(8 * (floor - gpu_per_microbatch), rel=1e-9)


def test_per_layer_graphs_keep_the_floor_of_moe_layers_only():
    """DeepSeek-V3: 61 layers, the first 3 dense (config.json first_k_dense_replace 3), 58 MoE."""
    deepseek = get_model("deepseek-v3")
    assert host_floor_kept(deepseek, TrainingSetup(cuda_graphs="none")) == 1.0
    assert host_floor_kept(deepseek, TrainingSetup(cuda_graphs="per-layer")) == pytest.approx(58 / 61)
    assert host_floor_kept(deepseek, TrainingSetup(cuda_graphs="full-iteration")) == 0.0
    assert host_floor_kept(get_model("llama-3-8b"), TrainingSetup(cuda_graphs="per-layer")) == 0.0
