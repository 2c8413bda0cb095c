"""Engine candidate E10, by hand: LoRA adapters per Megatron's fused modules, small memory-bound kernels
at the launch-gap constant, and the DP gradient sync's pipelined-bucket exposure.

Shapes: Llama 3 8B (hidden 4096, 32 heads / 8 KV heads of 128, FFN 14336, gated), tests/support/hand_specs.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.flops import lora_adapter_params_per_token, lora_target_dims
from shardwise.engine.performance.compute import _lora_time, microbatch_compute
from shardwise.engine.performance.dp import ShardedParams, bucket_share, pipelined_bucket_exposure
from shardwise.engine.performance.gemm_efficiency import Roofline
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B

MEGATRON_FOUR = ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")
MLPERF_TWO = ("linear_qkv", "linear_proj")


def test_fused_module_dims():
    """linear_qkv: 4096 -> q 32×128 + k 8×128 + v 8×128 = 6144; linear_fc1: 4096 -> gate|up 2×14336 = 28672."""
    assert lora_target_dims(LLAMA3_8B, "linear_qkv", 14336) == (4096, 6144)
    assert lora_target_dims(LLAMA3_8B, "linear_proj", 14336) == (4096, 4096)
    assert lora_target_dims(LLAMA3_8B, "linear_fc1", 14336) == (4096, 28672)
    assert lora_target_dims(LLAMA3_8B, "linear_fc2", 14336) == (14336, 4096)


def test_adapter_params_per_token_fused_vs_peft():
    """Rank 16, 32 layers. Fused (one A per module): qkv 4096+6144, proj 4096+4096, fc1 4096+28672,
    fc2 14336+4096 = 69,632 -> ×16×32 = 35,651,584. PEFT's seven: q 8192 + k 5120 + v 5120 + o 8192
    + 3 × 18432 = 81,920 -> 41,943,040 (q, k and v each carry their own 4096-wide A)."""
    fused = TrainingSetup(mode="lora", lora_rank=16, lora_targets=MEGATRON_FOUR)
    peft = TrainingSetup(mode="lora", lora_rank=16)
    assert lora_adapter_params_per_token(LLAMA3_8B, fused) == 35_651_584
    assert lora_adapter_params_per_token(LLAMA3_8B, peft) == 41_943_040


@pytest.mark.parametrize("targets, adapter_gemms", [(None, 14), (MEGATRON_FOUR, 8), (MLPERF_TWO, 4)])
def test_adapter_kernels_pay_the_small_kernel_cost(targets, adapter_gemms):
    """With an infinitely fast GPU only fixed costs remain: 2 GEMMs (A, B) per adapted module, each
    at the small-kernel cost (5 µs here), none at the large kernels' 20 µs. PEFT's 7 -> 14 × 5 µs = 70 µs;
    Megatron's 4 fused -> 40 µs; MLPerf's 2 -> 20 µs."""
    setup = TrainingSetup(mode="lora", lora_rank=16, **({"lora_targets": targets} if targets else {}))
    roof = Roofline(peak_flops=1e30, efficiency=1.0, hbm_bytes_per_s=1e30, kernel_fixed_s=20e-6, input_bytes=2.0)
    t = _lora_time(LLAMA3_8B, setup, 8192.0, np.array([1.0]), roof, True, 5e-6)
    assert t == pytest.approx([adapter_gemms * 5e-6])


def test_non_gemm_kernels_follow_the_small_kernel_cost_only():
    """A dense layer's forward has NON_GEMM_KERNELS_PER_LAYER_FWD = 18 small kernels (assumptions/compute.py):
    raising the small-kernel cost by 10 µs adds 18 × 10 = 180 µs forward and, at ELEMENTWISE_BACKWARD_RATIO = 2,
    360 µs backward; the large-kernel cost does not price them."""
    cluster = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(8, 8)
    setup = TrainingSetup(seq_len=4096, global_batch=8)

    def layer(small, large=DEFAULT_ASSUMPTIONS.kernel_fixed_s):
        a = replace(DEFAULT_ASSUMPTIONS, small_kernel_fixed_s=small, kernel_fixed_s=large)
        return microbatch_compute(LLAMA3_8B, cluster, setup, grid, a).dense_layer

    base, more = layer(0.0), layer(10e-6)
    assert more.forward - base.forward == pytest.approx(np.full(len(grid), 180e-6))
    assert more.backward - base.backward == pytest.approx(np.full(len(grid), 360e-6))


def test_pipelined_bucket_exposure_by_hand():
    """exposed = max(f·R, R − (1 − f)·T) (dp.py; Li et al. 2020). R = 10, f = 0.25: T = 8 -> max(2.5, 4) = 4;
    T = 20 -> the last bucket alone, 2.5; one bucket (f = 1) -> all 10 exposed whatever T."""
    got = pipelined_bucket_exposure(np.array([10.0, 10.0, 10.0]), np.array([8.0, 20.0, 100.0]),
                                    np.array([0.25, 0.25, 1.0]))
    assert got == pytest.approx([4.0, 2.5, 10.0])


def test_megatron_bucket_grows_with_dp():
    """Megatron-Core: bucket = max(40M, 1M × DP×CP) of 1,000M params on 512 GPUs. TP 2 × CP 4: DP 64, DP×CP 256
    -> f = 0.256. TP 8: DP 64 -> 64M, f = 0.064. TP 8 × CP 2: DP 32, DP×CP 64 -> 0.064. Other frameworks keep
    40M: f = 0.04."""
    grid = PlanGrid.build(512, 512, tp=[2, 8, 8], cp=[4, 1, 2])
    params = ShardedParams(dense=np.full(len(grid), 1e9), expert=np.zeros(len(grid)))
    assert bucket_share(params, grid, "megatron") == pytest.approx([0.256, 0.064, 0.064])
    assert bucket_share(params, grid, "fsdp") == pytest.approx([0.04, 0.04, 0.04])


def test_a2a_cp_bytes_and_no_ring_kernels(monkeypatch):
    """Ulysses-style CP (cp_comm_type a2a), TP 1, 4,096 tokens per GPU, BF16 (2 bytes): Q 4096 × 32 heads × 128
    × 2 = 33,554,432 B; K and V 4096 × 8 × 128 × 2 = 8,388,608 B each; the output as Q. Forward sends these four,
    backward four more of the same sizes (dO, dQ, dK, dV); no ring kernels, so the fixed kernel costs do not
    enter. With each all-to-all priced at 1 s per GB: (33.55 + 8.39 + 8.39 + 33.55) MB × 2 = 0.16777 s."""
    import shardwise.engine.performance.cp as cp_module

    sent = []
    monkeypatch.setattr(cp_module, "all_to_all_time", lambda b, links: sent.append(np.asarray(b)) or np.asarray(b) / 1e9)
    cluster = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
    grid = PlanGrid.build(8, 8, cp=[2], recompute=[0])  # no recompute: the forward is not sent again
    tokens = np.array([4096.0])
    for fixed in (0.0, 50e-6):
        assume = replace(DEFAULT_ASSUMPTIONS, kernel_fixed_s=fixed, small_kernel_fixed_s=fixed)
        t = cp_module.cp_time_per_layer(LLAMA3_8B, cluster, grid, tokens, np.array([1e-3]), assume, "a2a")
        assert t == pytest.approx([2 * (33_554_432 + 8_388_608 * 2 + 33_554_432) / 1e9])
    assert [float(b[0]) for b in sent[:4]] == [33_554_432, 8_388_608, 8_388_608, 33_554_432]
