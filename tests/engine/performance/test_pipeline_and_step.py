"""Pipeline bubble, stage balance, GEMM roofline and the assembled step, against hand
calculations and physical invariants."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.cluster import Cluster
from shardwise.engine.performance import step_time
from shardwise.engine.performance.gemm_efficiency import Roofline
from shardwise.engine.performance.pp import bubble_fraction, busiest_stage_layers, pipeline_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup

from support.hand_specs import H100, IB, LLAMA3_8B, NVLINK


def test_1f1b_bubble_fraction():
    """Narayanan et al. 2021 eq. (1)-(2): (p−1)/m, interleaved (p−1)/(m·v). p=8, m=32: 7/32; v=4: 7/128."""
    assert bubble_fraction(np.array([8]), np.array([32]), np.array([1]))[0] == pytest.approx(7 / 32)
    assert bubble_fraction(np.array([8]), np.array([32]), np.array([4]))[0] == pytest.approx(7 / 128)
    assert bubble_fraction(np.array([1]), np.array([32]), np.array([1]))[0] == 0


def test_pipeline_time_is_m_plus_p_minus_1_slots():
    """p=4, m=8, 1 s per micro-batch on the busiest stage: (8 + 3) s; interleaved v=3: 8 + 1 s."""
    grid = PlanGrid.build(32, 64, pp=[4, 4], vpp=[1, 3])  # dp = 8, m = 64/8 = 8
    assert list(grid.num_microbatches) == [8, 8]
    t = pipeline_time(np.array([1.0, 1.0]), np.array([1.0, 1.0]), grid)
    assert t == pytest.approx([11.0, 9.0])


def test_busiest_stage_even_and_balanced_split():
    """32 layers on 4 stages, logits worth 2.4 layers on the last. Even split: 8 + 2.4 = 10.4.
    Balanced: k = 9 layers on stages 1-3, 32 − 27 = 5 + 2.4 = 7.4 on the last -> max 9
    (k = 8 would give 8 + 2.4 = 10.4; no integer split beats 9)."""
    extra = np.array([2.4])
    assert busiest_stage_layers(32, np.array([4]), extra, balance=False)[0] == pytest.approx(10.4)
    assert busiest_stage_layers(32, np.array([4]), extra, balance=True)[0] == pytest.approx(9.0)
    # No pipeline: everything on one stage.
    assert busiest_stage_layers(32, np.array([1]), extra, balance=True)[0] == pytest.approx(34.4)


def test_gemm_roofline_by_hand():
    """8192×8192×8192 BF16 GEMM = 1.0995e12 FLOPs at 989 TFLOP/s × 0.6 -> 1.853 ms + 10 µs fixed;
    a 1×8192×8192 GEMV is memory-bound: 2·(8192 + 8192²) + 2·8192 bytes at 2.345 TB/s."""
    r = Roofline(989e12, 0.6, 3350e9 * 0.7, 10e-6, 2.0)
    assert r.gemm_time(8192, 8192, 8192) == pytest.approx(2 * 8192**3 / (989e12 * 0.6) + 10e-6)
    gemv_bytes = 2 * (8192 + 8192 * 8192) + 2 * 8192
    assert r.gemm_time(1, 8192, 8192) == pytest.approx(gemv_bytes / (3350e9 * 0.7) + 10e-6)
    # Small GEMMs run below the large-GEMM efficiency; large ones approach it.
    assert r.efficiency_of(256, 512, 512) < 0.5 * 0.6 < r.efficiency_of(8192, 8192, 8192)


def _run(grid_kwargs, num_gpus=64, gbs=256, seq=8192, model=LLAMA3_8B, **setup):
    cluster = Cluster(gpu=H100, num_gpus=num_gpus, gpus_per_node=8, network=IB)
    s = TrainingSetup(seq_len=seq, global_batch=gbs, **setup)
    grid = PlanGrid.build(num_gpus, gbs, **grid_kwargs)
    return step_time(model, cluster, s, grid), grid


def test_parts_add_up_and_flops_match_tokens():
    t, grid = _run(dict(tp=[1, 2, 8, 2], pp=[1, 2, 1, 4], vpp=[1, 1, 1, 2], zero_stage=[1, 3, 0, 1],
                        recompute=[0, 1, 2, 1]))
    parts = (t.compute + t.tp_comm + t.cp_comm + t.ep_comm + t.pp_bubble + t.pp_comm + t.dp_comm + t.optimizer
             + t.optimizer_phase)
    assert t.step == pytest.approx(parts)
    assert np.all(t.step > 0)
    # Model FLOPs per step = 51,470,401,536 per token (test_flops) × tokens per step.
    tokens = grid.dp * grid.micro_batch * grid.grad_accum * 8192
    assert t.model_flops_per_step == pytest.approx(51_470_401_536 * tokens)
    assert np.all(t.hardware_flops_per_step[1:] > t.model_flops_per_step[1:])  # recompute adds work
    assert t.hardware_flops_per_step[0] == t.model_flops_per_step[0]


def test_physical_orderings():
    # TP communication grows with TP; no TP, no TP traffic (FSDP stack: no TP overlap).
    t, _ = _run(dict(tp=[1, 2, 4, 8]), framework="fsdp")
    assert t.tp_comm[0] == 0 and np.all(np.diff(t.tp_comm[1:]) > 0)
    # More micro-batches shrink the bubble share; interleaving shrinks it further.
    t, grid = _run(dict(pp=[4, 4, 4], vpp=[1, 1, 2], micro_batch=[4, 1, 1]))
    share = t.pp_bubble / t.compute
    assert share[0] > share[1] > share[2]
    # ZeRO-3 gathers parameters every micro-batch: more DP traffic than ZeRO-1.
    t, _ = _run(dict(zero_stage=[1, 3]), gbs=512)
    assert t.dp_comm[1] > t.dp_comm[0]
    # Full recompute costs more compute time than selective, which costs more than none.
    t, _ = _run(dict(recompute=[0, 1, 2]))
    assert t.compute[0] < t.compute[1] < t.compute[2]
    # FP8 makes the GEMM-bound step faster on H100.
    bf16, _ = _run(dict(tp=[1]))
    fp8, _ = _run(dict(tp=[1]), precision="fp8")
    assert fp8.compute[0] < bf16.compute[0]


def test_lora_step_is_cheaper_than_full_finetuning():
    full, _ = _run(dict(tp=[1]))
    lora, _ = _run(dict(tp=[1]), mode="lora")
    assert lora.compute[0] < full.compute[0]
    assert lora.optimizer[0] < 0.05 * full.optimizer[0]
    assert lora.model_flops_per_step[0] < full.model_flops_per_step[0]


def test_a_million_plans_at_once():
    n = 1_000_000
    rng = np.random.default_rng(0)
    grid = PlanGrid.build(1024, 1024, tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8], n),
                          micro_batch=rng.choice([1, 2, 4], n), zero_stage=rng.choice([0, 1, 2, 3], n),
                          recompute=rng.choice([0, 1, 2], n))
    cluster = Cluster(gpu=H100, num_gpus=1024, gpus_per_node=8, network=IB)
    t = step_time(LLAMA3_8B, cluster, TrainingSetup(seq_len=8192, global_batch=1024), grid, DEFAULT_ASSUMPTIONS)
    assert t.step.shape == (n,) and np.all(np.isfinite(t.step)) and np.all(t.step > 0)


def test_host_floor_and_the_cross_node_pipeline_host_cost():
    """A micro-batch never runs faster than the host dispatches its stage's layers:
    layers/stage × host time per layer. A framework with a pipeline host cost pays
    + that × TP per layer, only when its pipeline sends leave the node.
    Hand numbers: 32 layers / PP 2 = 16 per stage; 10 ms + 5 ms × TP 4 = 30 ms per layer -> 0.48 s;
    without the cross-node cost 16 × 10 ms = 0.16 s. GPU work per micro-batch (8B, seq 2048,
    TP 4, 16 layers: 6·3.5e9·2048/4 ≈ 1.1e13 FLOPs ≈ 20 ms) is far below both, so the host binds."""
    from dataclasses import replace
    assume = replace(DEFAULT_ASSUMPTIONS, host_time_per_layer={"megatron": 0.010},
                     pipeline_host_time_per_tp={"megatron": 0.005})
    setup = TrainingSetup(seq_len=2048, global_batch=64)

    def per_microbatch(num_gpus):
        cluster = Cluster(gpu=H100, num_gpus=num_gpus, gpus_per_node=8, network=IB)
        grid = PlanGrid.build(num_gpus, 64, tp=[4], pp=[2])
        return step_time(LLAMA3_8B, cluster, setup, grid, assume).details["microbatch_s"][0]

    # 64 GPUs: PP peers are tp·dp = 32 ranks apart -> different nodes.
    assert per_microbatch(64) == pytest.approx(16 * (0.010 + 0.005 * 4))
    # 8 GPUs: both stages in one node -> only the plain host time.
    assert per_microbatch(8) == pytest.approx(16 * 0.010)
    # The shipped assumption charges nothing extra to Megatron, FSDP or DeepSpeed.
    assert all(DEFAULT_ASSUMPTIONS.pipeline_host_time_for(fw) == 0.0 for fw in ("megatron", "fsdp", "deepspeed"))


def test_sliding_window_layers_cost_their_window_in_time_as_in_flops():
    """Half of 32 layers with a causal 1,024-token window at seq 8,192 (Gemma-2-style).
    Keys per query: full causal s/2 = 4,096; windowed w − w²/(2s) = 1,024 − 1,024²/16,384 = 960.
    Average over layers (16·4,096 + 16·960)/32 = 2,528, so the attention core's FLOPs — and its
    time above the fixed per-kernel cost — shrink by 2,528 / 4,096 against the same model without
    a window (FlashAttention/cuDNN skip the blocks outside the window)."""
    from dataclasses import replace as dc_replace

    windowed = LLAMA3_8B.model_copy(update={"sliding_window": 1024, "sliding_window_layer_fraction": 0.5})
    assume = dc_replace(DEFAULT_ASSUMPTIONS, kernel_fixed_s=0.0)
    cluster = Cluster(gpu=H100, num_gpus=8, gpus_per_node=8, network=IB)
    setup = TrainingSetup(seq_len=8192, global_batch=64)
    grid = PlanGrid.build(8, 64, tp=[1])
    full = step_time(LLAMA3_8B, cluster, setup, grid, assume).details["attention_s"][0]
    local = step_time(windowed, cluster, setup, grid, assume).details["attention_s"][0]
    assert local / full == pytest.approx(2528 / 4096, rel=1e-9)
