"""KV cache size and rollout generation time, against hand calculations written out here.

Sources: the KV cache of a token is 2 (key, value) × layers × KV heads × head dim × bytes (Kwon et al.
2023, "Efficient Memory Management for LLM Serving with PagedAttention", sec. 3: 800 KB per token for
OPT-13B = 2 × 5120 × 40 × 2 bytes); the decode roofline reads every weight and the cached context once
per generated token (Pope et al. 2022). Shapes from the models' config.json; H100 SXM: 80 GiB,
3,350 GB/s HBM, 989 dense BF16 TFLOP/s (NVIDIA datasheet). The efficiency fractions are the named
assumptions in engine/assumptions/post_training.py, read here as inputs.
"""

from __future__ import annotations

import pytest

from shardwise.engine.assumptions.post_training import (DECODE_COMPUTE_EFFICIENCY, DECODE_HBM_BANDWIDTH_FRACTION,
                                                        ROLLOUT_GPU_MEMORY_UTILIZATION)
from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.post_training import post_training
from shardwise.engine.post_training.kv_cache import kv_cache_bytes_per_token
from shardwise.engine.post_training.rollout import rollout

GIB = 2**30
H100_HBM, H100_BF16, H100_MEMORY = 3350e9, 989e12, 80 * GIB


def test_opt_13b_kv_cache_is_800_kb_per_token_as_the_vllm_paper_says():
    opt_13b = ModelSpec(name="OPT-13B", num_layers=40, hidden_size=5120, num_attention_heads=40,
                        ffn_hidden_size=20480, gated_mlp=False, vocab_size=50272, norm="layernorm")
    assert kv_cache_bytes_per_token(opt_13b, 1) == 2 * 5120 * 40 * 2 == 819_200


def test_llama_3_1_8b_kv_cache_per_gpu_with_gqa_and_tp():
    m = get_model("llama-3.1-8b")  # 32 layers, 8 KV heads of 128
    assert kv_cache_bytes_per_token(m, 1) == 2 * 32 * 8 * 128 * 2 == 131_072  # 128 KiB per token
    assert kv_cache_bytes_per_token(m, 2) == 2 * 32 * 4 * 128 * 2  # heads split over 2 GPUs
    assert kv_cache_bytes_per_token(m, 16) == 2 * 32 * 1 * 128 * 2  # TP 16 > 8 heads: one replicated head each


def test_deepseek_v3_caches_the_mla_latent_on_every_rank():
    m = get_model("deepseek-v3")  # 61 layers, kv_lora_rank 512, qk_rope_head_dim 64
    assert kv_cache_bytes_per_token(m, 1) == (512 + 64) * 61 * 2 == 70_272
    assert kv_cache_bytes_per_token(m, 8) == 70_272


# Llama-3.1-8B: GEMM weights per token (q, k, v, o; gate, up, down; LM head) and all parameters.
H, L, KV, D, FFN, VOCAB = 4096, 32, 8, 128, 14336, 128256
GEMM_WEIGHTS = L * (H * H + 2 * H * KV * D + H * H + 3 * H * FFN) + VOCAB * H  # 7,504,658,432
PARAMS = 8_030_261_248  # Hugging Face meta-llama/Llama-3.1-8B


def test_rollout_of_llama_3_1_8b_on_8_h100_by_hand():
    cluster = build_cluster("h100", 8)
    post = post_training("grpo", prompt_len=512, response_len=512, group_size=8, inference_tp=2)
    r = rollout(get_model("llama-3.1-8b"), cluster, post, global_batch=64)
    # 8 GPUs / TP 2 = 4 engines, 64 / 4 = 16 sequences each; their KV (16 × 1,024 tokens × 64 KiB = 1 GiB) fits
    # the budget 0.5 × 80 GiB − 8.03 GB of weights per GPU, so all 16 decode together in one wave.
    assert (r.sequences_per_engine, r.concurrent_sequences, r.waves) == (16, 16, 1)
    assert r.kv_cache_bytes == 16 * 1024 * (2 * L * 4 * D * 2) == GIB
    assert r.kv_budget_bytes == ROLLOUT_GPU_MEMORY_UTILIZATION * H100_MEMORY - PARAMS * 2 / 2
    # One decode step at the mean context 512 + 512/2 = 768: read this GPU's weights and the wave's KV cache.
    bytes_read = PARAMS * 2 / 2 + 16 * 768 * (2 * L * 4 * D * 2)  # 8,835,567,616 B
    memory_s = bytes_read / (H100_HBM * DECODE_HBM_BANDWIDTH_FRACTION)  # 4.40 ms
    flops = 16 * (2 * GEMM_WEIGHTS + 2 * L * 32 * (D + D) * 768) / 2
    compute_s = flops / (H100_BF16 * DECODE_COMPUTE_EFFICIENCY)  # 0.25 ms: decode is memory-bound
    assert memory_s > 10 * compute_s
    assert r.decode_s == pytest.approx(512 * memory_s, rel=1e-9)  # 2.25 s
    # Prefill: 16 prompts × 512 tokens × forward FLOPs per token (GEMMs + causal attention over 512/2 keys).
    prefill_flops = 16 * 512 * (2 * GEMM_WEIGHTS + L * 2 * (512 / 2) * 32 * (D + D)) / 2
    assert r.prefill_s == pytest.approx(prefill_flops / (H100_BF16 * DECODE_COMPUTE_EFFICIENCY), rel=1e-9)


def test_rollout_runs_in_waves_when_the_kv_budget_is_short():
    # Llama-3.1-70B, one engine of 8 H100s, 256 sequences of 1,024 + 7,168 tokens.
    m = get_model("llama-3.1-70b")
    params = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 2 * 128256 * 8192 + 8192
    assert params == 70_553_706_496
    post = post_training("grpo", prompt_len=1024, response_len=7168, group_size=8, inference_tp=8)
    r = rollout(m, build_cluster("h100", 8), post, global_batch=256)
    budget = 0.5 * 80 * GIB - params * 2 / 8  # 25,311,246,336 B
    per_sequence = 8192 * (2 * 80 * 1 * 128 * 2)  # one KV head per GPU: 335,544,320 B
    assert r.concurrent_sequences == int(budget // per_sequence) == 75
    assert r.waves == 4  # 75 + 75 + 75 + 31
    assert r.kv_cache_bytes == 75 * per_sequence


def test_rollout_that_cannot_hold_one_sequence_does_not_fit_and_says_why():
    from shardwise.engine.evaluate import evaluate
    from shardwise.engine.post_training.modes import training_setup
    from shardwise.engine.strategy import Strategy

    # Llama-3.1-70B's bf16 weights on one GPU (141 GB) already exceed vLLM's 0.5 × 80 GiB budget.
    setup = training_setup("grpo", inference_tp=1, global_batch=64)
    e = evaluate(get_model("llama-3.1-70b"), build_cluster("h100", 8), setup, Strategy(zero_stage=3, micro_batch=1))
    assert not e.memory.fits and e.memory.peak_phase == "rollout"
    assert e.post_training.rollout["concurrent_sequences"] == 1
    assert any(w.rule == "rollout_layout" and "raise the inference TP" in w.message for w in e.warnings)


def test_inference_tp_must_divide_the_heads():
    with pytest.raises(ShardwiseInputError, match="does not divide the 32 attention heads"):
        rollout(get_model("llama-3.1-8b"), build_cluster("h100", 8), post_training("grpo", inference_tp=3), 64)
    with pytest.raises(ShardwiseInputError, match="needs more than the 8 GPUs"):
        rollout(get_model("llama-3.1-8b"), build_cluster("h100", 8), post_training("grpo", inference_tp=16), 64)


def test_engines_that_do_not_tile_the_cluster_leave_gpus_idle():
    from shardwise.engine.post_training.rollout import rollout_warnings

    cluster, post = build_cluster("h100", 12), post_training("grpo", inference_tp=8)
    r = rollout(get_model("llama-3.1-8b"), cluster, post, global_batch=64)
    assert r.sequences_per_engine == 64  # one engine of 8 GPUs; 4 GPUs idle
    assert any("4 GPU(s) sit idle" in w for w in rollout_warnings(cluster, post, r))
