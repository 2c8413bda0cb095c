"""MoE/MLA memory as Megatron-Core's MoE recipe runs it (recompute_modules.py, memory/activations.py),
checked against hand counts of the tensors each layer keeps for backward.

DeepSeek-V3 shapes (HF config.json): h = 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512,
qk_nope 128, qk_rope 64, v_head 128; 256 routed experts top-8, expert ffn 2048, 1 shared expert
(ffn 2048). TP = 1 (no sequence parallelism), Megatron, FP8 (Transformer Engine keeps the FP8 cast
of each linear's input: 1 byte per element).
"""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.memory.activations import ActivationOptions, layer_activations
from shardwise.engine.model_catalog import get_model
from shardwise.engine.plans import PlanGrid
from shardwise.engine.recompute_modules import selective_modules
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

V3 = get_model("deepseek-v3")
H = 7168


def _moe_saved(recompute: str, precision: str = "fp8") -> float:
    grid = PlanGrid.from_strategy(Strategy(tp=1, pp=16, ep=64, recompute=recompute), 2048, 15360)
    acts = layer_activations(V3, TrainingSetup(precision=precision), grid, ActivationOptions())
    return float(acts.moe_saved[0])


def test_selective_means_the_megatron_moe_module_set():
    """Megatron-Core MoE README, fine-grained recomputation: mla_up_proj, layernorm, moe_act (+ core_attn)."""
    assert selective_modules(V3, TrainingSetup()) == ("core_attn", "layernorm", "mla_up_proj", "moe_act")
    assert selective_modules(get_model("llama-3-8b"), TrainingSetup()) == ("core_attn",)
    assert selective_modules(V3, TrainingSetup(framework="fsdp")) == ("core_attn",)


def test_moe_layer_bytes_per_token_under_the_recipe():
    """Per token of an MoE layer, FP8, selective = core_attn + layernorm + mla_up_proj + moe_act:
    residual stream at both norms        2 · 2h bf16                 = 28,672
    RMSNorm rstd (fp32), 2 norms         2 · 4                       =      8
    q/kv down-projection input           h FP8 (TE cast; the bf16 norm output is recomputed) = 7,168
    MLA latents (down outputs) bf16      (1536 + 512 + 64) · 2       =  4,224
    q, k, v                              recomputed from the latents =      0
    attention output bf16                128 · 128 · 2               = 32,768
    log-sum-exp                          recomputed with core_attn   =      0
    MLP input (router/expert/shared)     h FP8                       =  7,168
    router probabilities bf16            256 · 2                     =    512
    routing bookkeeping                  8 · (3 int64 + 1 bf16)      =    208
    per (token, expert) pair, 8 pairs:   FP8 expert input h + fc1 output 2·2048 bf16
                                         (probabilities applied in the activation: no expert
                                         output kept; moe_act: no fc2 input)  = 8 · 15,360 = 122,880
    shared expert (dense MLP, fused SwiGLU): fc1 output 2·2048 bf16 + fc2 input 2048 FP8 = 10,240
    total                                                             = 213,848 bytes."""
    expected = (2 * 2 * H + 2 * 4 + H + (1536 + 512 + 64) * 2 + 128 * 128 * 2 + H + 256 * 2
                + 8 * (3 * 8 + 2) + 8 * (H + 2 * 2048 * 2) + (2 * 2048 * 2 + 2048))
    assert expected == 213_848
    assert _moe_saved("selective") == pytest.approx(expected)


def test_moe_layer_without_recompute_keeps_qkv_but_no_expert_output():
    """No recompute, FP8: residual 2·2h + rstd 8, q/kv-down input h FP8, latents with their norm
    outputs (1536·2 + 576 + 512) bf16, q and k 128·192 each, v and output 128·128 each (bf16),
    log-sum-exp 128 fp32, MLP input h FP8, router 512 + 208, per pair: FP8 input h + fused weighted
    SwiGLU's input (fc1 output) 2·2048 bf16 + fc2's input 2048 FP8 (TE GroupedLinear keeps its FP8
    cast, as a dense fc2); no expert output: Megatron-Core multiplies the routing probability inside
    the activation whatever the recompute (megatron/core/transformer/moe/experts.py,
    TEGroupedMLP.forward, `bias_act_func(fc1_output, bias_parallel, permuted_probs)`), and the
    unpermute that sums the pairs back keeps only its index map; shared expert 10,240."""
    expected = (2 * 2 * H + 8 + H + (1536 * 2 + 576 + 512) * 2 + (2 * 128 * 192 + 2 * 128 * 128) * 2
                + 128 * 4 + H + 512 + 208 + 8 * (H + 2 * 2048 * 2 + 2048) + 10_240)
    assert expected == 365_912
    assert _moe_saved("none") == pytest.approx(expected)
    # The recipe drops the latents' norm outputs (1536 + 512)·2, q, k, v (2·128·192 + 128·128)·2,
    # the log-sum-exp 128·4 and the experts' fc2 inputs 8·2048 FP8.
    dropped = (1536 + 512) * 2 + (2 * 128 * 192 + 128 * 128) * 2 + 128 * 4 + 8 * 2048
    assert _moe_saved("none") - _moe_saved("selective") == pytest.approx(dropped)


def test_deepseek_v3_published_layout_fits_with_the_recipe():
    """DeepSeek-V3 report sec. 3.2/4.2: 2,048 H800 (80 GB), TP1 PP16 EP64, seq 4096, batch 15,360,
    FP8 — trained within 80 GB. With selective (the MoE recipe) it must fit; without recompute the
    16 in-flight micro-batches × 4 layers × 4096 tokens of ~0.37 MB each cannot."""
    from shardwise.engine.evaluate import evaluate
    from shardwise.engine.inputs import build_cluster

    cluster = build_cluster("h800", 2048)
    setup = TrainingSetup(seq_len=4096, global_batch=15360, precision="fp8", moe_dispatcher="deepep")
    fits = evaluate(V3, cluster, setup, Strategy(tp=1, pp=16, ep=64, zero_stage=1, recompute="selective"))
    assert fits.memory.fits and fits.memory.total_gib <= 80
    none = evaluate(V3, cluster, setup, Strategy(tp=1, pp=16, ep=64, zero_stage=1, recompute="none"))
    assert not none.memory.fits


def test_deepseek_v3_published_throughput_within_15_percent():
    """DeepSeek-V3 report, Table 1: 180K H800 GPU-hours per trillion tokens →
    1e12 / (180e3 · 3600) = 1,543 tokens/s/GPU (measured, including everything the run paid).
    Published layout with DeepEP (the report's dispatch kernels) must be predicted within 15 %."""
    from shardwise.engine.evaluate import evaluate
    from shardwise.engine.inputs import build_cluster

    measured = 1e12 / (180e3 * 3600)
    assert measured == pytest.approx(1543.2, abs=0.1)
    setup = TrainingSetup(seq_len=4096, global_batch=15360, precision="fp8", moe_dispatcher="deepep")
    e = evaluate(V3, build_cluster("h800", 2048), setup, Strategy(tp=1, pp=16, ep=64, zero_stage=1))
    assert abs(e.throughput.tokens_per_s_per_gpu / measured - 1) < 0.15


def test_zero2_bucket_holds_no_experts_when_expert_dp_is_one():
    """Megatron ZeRO-2 (Megatron-FSDP optim_grads) reduce-scatters each layer's fp32 main gradients
    through a bucket; routed experts shard over expert-DP = TP·CP·DP/(EP·ETP), here 8·1·4/32 = 1, so
    they are never reduce-scattered and need no bucket. DeepSeek-V3 on 256 H800, TP8 PP8 EP32:
    the largest bucket is then a dense layer's non-expert parameters, by hand:
      replicated: q_a 7168·1536 + kv_a 7168·576 + norms 1536 + 512 + 2·7168
      split by TP 8: q_b 1536·128·192 + kv_b 512·128·256 + o 128·128·7168 + dense MLP 3·7168·18432
    times 4 bytes (fp32) — far below one MoE layer's 8 local experts (8·3·7168·2048 = 352 M params).
    And ZeRO-2 then never needs more memory than ZeRO-1 (the issue's DeepSeek-V3 report)."""
    from shardwise.engine.evaluate import evaluate
    from shardwise.engine.inputs import build_cluster

    replicated = 7168 * 1536 + 7168 * 576 + 1536 + 512 + 2 * 7168
    split = 1536 * 128 * 192 + 512 * 128 * 256 + 128 * 128 * 7168 + 3 * 7168 * 18432
    dense_bucket = 4 * (replicated + split / 8)
    cluster = build_cluster("h800", 256)
    setup = TrainingSetup(seq_len=4096, global_batch=1024)
    z1, z2 = (evaluate(V3, cluster, setup, Strategy(tp=8, pp=8, ep=32, zero_stage=z)).memory for z in (1, 2))
    assert z2.details_gib["gradients.unsharded_buffers"] * 2**30 <= dense_bucket * 1.001
    assert z2.total_gib <= z1.total_gib


def test_deepep_buffers_by_deepeps_own_size_hints():
    """DeepEP Config.get_nvl_buffer_size_hint / get_rdma_buffer_size_hint (csrc/legacy/config.hpp),
    EP = 64 (config: 288 NVLink / 128 RDMA receive tokens), 20 SMs → 10 channels, 8 NVLink ranks,
    8 RDMA ranks, hidden bytes 2·7168 = 14,336; a token slot holds 14,336 + 8 (source meta)
    + 128·8 (top-k indices) + 128·4 (weights) + 128·4 (scales) = 16,392 bytes.
      NVLink: 10·8·((2·8 + 3)·4 + 288·16,392)           = 377,677,760
      RDMA:   10·8·((8·2 + 2)·2·4 + 128·2·(16,392 + 16)) = 336,047,360
    EP = 8 (one node) has no RDMA buffer: 10·8·((2 + 3)·4 + 256·16,392) = 335,709,760."""
    from shardwise.engine.memory.ep_buffers import deepep_buffer_bytes

    assert deepep_buffer_bytes(H, np.array([64]))[0] == 377_677_760 + 336_047_360
    assert deepep_buffer_bytes(H, np.array([8]))[0] == 335_709_760
    assert deepep_buffer_bytes(H, np.array([1]))[0] == 0


def _moe_saved_with(modules: tuple[str, ...]) -> float:
    grid = PlanGrid.from_strategy(Strategy(tp=1, pp=16, ep=64, recompute="selective"), 2048, 15360)
    setup = TrainingSetup(precision="fp8", recompute_modules=modules)
    return float(layer_activations(V3, setup, grid, ActivationOptions()).moe_saved[0])


def test_a_recipe_list_of_mla_up_proj_only():
    """Megatron-Bridge's GB200/B200/B300 DeepSeek-V3 recipes: recompute_granularity selective with
    recompute_modules = [mla_up_proj] (perf_recipes/deepseek/gb200/deepseek_v3.py). Of the 365,912 B
    kept without recompute (above) only q, k, v (2·128·192 + 128·128)·2 = 131,072 and the latents'
    norm outputs (1536 + 512)·2 = 4,096 (rebuilt inside the up-projection checkpoint,
    multi_latent_attention.py) go; the log-sum-exp (no core_attn), the FP8 norm outputs (no layernorm)
    and the experts' fc2 inputs (no moe_act) stay: 365,912 − 131,072 − 4,096 = 230,744 B."""
    assert _moe_saved_with(("mla_up_proj",)) == pytest.approx(365_912 - 131_072 - 4_096)
    assert selective_modules(V3, TrainingSetup(recompute_modules=("mla_up_proj",))) == ("mla_up_proj",)


def test_an_empty_recipe_list_recomputes_nothing():
    """Megatron-Core with recompute_granularity selective and recompute_modules = [] (Bridge's GB300
    DeepSeek-V3 MXFP8 recipe) recomputes no module: what the layer keeps is the no-recompute count."""
    assert _moe_saved_with(()) == pytest.approx(_moe_saved("none"))


def test_recompute_modules_are_checked():
    with pytest.raises(ValueError, match="not modelled"):
        TrainingSetup(recompute_modules=("mlp",))
    with pytest.raises(ValueError, match="Megatron-Core option"):
        TrainingSetup(framework="fsdp", recompute_modules=("core_attn",))
