"""Megatron-Core options that change what the weights and gradients cost: --grad-reduce-in-bf16
(TrainingSetup.grad_reduce_dtype) and --fp8-param-gather (TrainingSetup.fp8_param_gather), by hand.

Llama-3-8B (HF config): 8,030,261,248 parameters; GEMM weights per layer 4096·(4096 + 1024 + 1024)
(q, k, v) + 4096·4096 (o) + 3·4096·14336 (gate, up, down) = 218,103,808, × 32 layers = 6,979,321,856;
the rest, 1,050,939,392, is the embedding and output matrices (2 · 128,256 · 4096) and 65 RMSNorm
weights of 4096. One GPU, ZeRO-1 over DP 8: weights and gradients are not sharded.
"""

from __future__ import annotations

import pytest

from shardwise.engine.inputs import build_cluster
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.model_catalog import get_model
from shardwise.engine.plans import PlanGrid
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

PARAMS = 8_030_261_248
GEMM = 32 * (4096 * (4096 + 1024 + 1024) + 4096 * 4096 + 3 * 4096 * 14336)
MODEL = get_model("llama-3-8b")


def _details(**setup) -> dict[str, float]:
    cluster = build_cluster("h100-sxm", 8)
    grid = PlanGrid.from_strategy(Strategy(tp=1, pp=1, zero_stage=1), 8, 64)
    mem = memory_per_gpu(MODEL, cluster, TrainingSetup(**setup), grid)
    return {k: float(v[0]) for k, v in mem.details.items()}


def test_hand_counts_of_the_model():
    assert GEMM == 6_979_321_856
    assert PARAMS - GEMM == 2 * 128_256 * 4096 + 65 * 4096


def test_main_grad_is_fp32_by_default_and_bf16_when_reduced_in_bf16():
    """megatron/core/distributed/param_and_grad_buffer.py: the grad buffer is fp32 with
    grad_reduce_in_fp32 (Megatron's default for BF16), else the param dtype (bf16)."""
    assert _details()["gradients.gradients"] == pytest.approx(4 * PARAMS)
    assert _details(grad_reduce_dtype="bf16")["gradients.gradients"] == pytest.approx(2 * PARAMS)


def test_fp8_param_gather_keeps_no_bf16_copy_of_the_gemm_weights():
    """Without it TE FP8 keeps the BF16 weights plus an FP8 copy and its transpose (2 bytes per GEMM
    weight); with FP8 primary weights only the FP8 pair and the BF16 non-GEMM weights remain."""
    plain = _details(precision="fp8")
    assert plain["weights.parameters"] == pytest.approx(2 * PARAMS)
    assert plain["weights.fp8_weight_cache"] == pytest.approx(2 * GEMM)
    fp8 = _details(precision="fp8", fp8_param_gather=True)
    assert fp8["weights.parameters"] == pytest.approx(2 * (PARAMS - GEMM))  # 2,101,878,784 B
    assert fp8["weights.fp8_weight_cache"] == pytest.approx(2 * GEMM)


def test_the_options_are_megatron_ones():
    with pytest.raises(ValueError, match="Megatron-Core option"):
        TrainingSetup(framework="fsdp", grad_reduce_dtype="bf16")
    with pytest.raises(ValueError, match="fp8_param_gather"):
        TrainingSetup(precision="bf16", fp8_param_gather=True)
