"""memory_per_gpu against hand calculations written out here, each with its source.

Numbers are computed in the test from the formula (never copied from the engine's output)."""

from __future__ import annotations

import pytest

from shardwise.engine.inputs import build_cluster
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.memory.pipeline_inflight import inflight_microbatches
from shardwise.engine.memory.stages import stage_load
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.plans import RECOMPUTE_FULL, RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, PlanGrid
from shardwise.engine.training import TrainingSetup

GIB = 2**30

# Llama 3.1 70B (Meta's config.json): 80 layers, hidden 8192, 64 heads, 8 KV heads, FFN 28672, vocab 128256.
LLAMA_70B = ModelSpec(name="llama-70b", num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                      ffn_hidden_size=28672, vocab_size=128256)
# Llama 3.1 8B: 32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 14336, vocab 128256.
LLAMA_8B = ModelSpec(name="llama-8b", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                     ffn_hidden_size=14336, vocab_size=128256)
# GPT-3 175B as in Korthikanti et al. 2022, Table 3: a=96, h=12288, L=96, s=2048 (LayerNorm, GELU MLP of 4h).
GPT3 = ModelSpec(name="gpt3", num_layers=96, hidden_size=12288, num_attention_heads=96, ffn_hidden_size=4 * 12288,
                 gated_mlp=False, activation="gelu", vocab_size=51200, norm="layernorm", qkv_bias=True,
                 mlp_bias=True, attention_out_bias=True)
# LLaMA-7B (the original): 32 layers, hidden 4096, 32 heads, FFN 11008, vocab 32000.
LLAMA1_7B = ModelSpec(name="llama-7b", num_layers=32, hidden_size=4096, num_attention_heads=32, ffn_hidden_size=11008,
                      vocab_size=32000)


def memory(model, gpus, framework="megatron", seq_len=4096, global_batch=None, mode="full", lora_rank=16,
           lora_targets=None, attention="flash", dropout=False, **plan):
    global_batch = global_batch or gpus
    extra = {"lora_targets": lora_targets} if lora_targets else {}
    setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch, framework=framework, mode=mode,
                          lora_rank=lora_rank, **extra)
    grid = PlanGrid.build(gpus, global_batch, **plan)
    mem = memory_per_gpu(model, build_cluster("h100", gpus), setup, grid, attention=attention, dropout=dropout)
    return mem, {k: float(v[0]) for k, v in mem.details.items()}


def llama70b_params_on_tp8_rank() -> int:
    """Exact per-rank count at TP = 8 (Megatron: matrices and vocabulary split, norms replicated)."""
    h, kv_dim, ffn, vocab, layers = 8192, 8 * 128, 28672, 128256, 80
    attention = 2 * h * h + 2 * h * kv_dim  # q, o: 134,217,728; k, v: 16,777,216
    mlp = 3 * h * ffn  # 704,643,072
    assert attention + mlp == 855_638_016
    split = layers * (attention + mlp) + 2 * vocab * h  # 68,451,041,280 + 2,101,346,304
    norms = (2 * layers + 1) * h  # 1,318,912
    return split // 8 + norms  # 8,820,367,360


def test_megatron_18_bytes_per_parameter_without_distributed_optimizer():
    # megatron/training/theoretical_memory_usage.py: 18 bytes/param (bf16 weight 2, fp32 main grad 4,
    # fp32 master + Adam m, v 12) without the distributed optimizer.
    mem, _ = memory(LLAMA_70B, 64, tp=8, pp=1, zero_stage=0)
    n = llama70b_params_on_tp8_rank()
    assert mem.weights[0] == 2 * n
    assert mem.gradients[0] == 4 * n
    assert mem.optimizer[0] == 12 * n
    assert (mem.weights + mem.gradients + mem.optimizer)[0] == 18 * n


def test_megatron_distributed_optimizer_6_plus_12_over_dp():
    # Same source: with --use-distributed-optimizer, 6 + 12/DP bytes per parameter. 64 GPUs, TP 8 → DP 8.
    mem, _ = memory(LLAMA_70B, 64, tp=8, pp=1, zero_stage=1)
    n = llama70b_params_on_tp8_rank()
    assert (mem.weights + mem.gradients + mem.optimizer)[0] == pytest.approx((6 + 12 / 8) * n)


def test_llama70b_zero1_optimizer_states_per_gpu():
    # 12 bytes/param of optimizer state, split over DP = 8: 12 × 8,820,367,360 / 8 = 13,230,551,040 B.
    mem, _ = memory(LLAMA_70B, 64, tp=8, pp=1, zero_stage=1)
    assert mem.optimizer[0] == pytest.approx(13_230_551_040)
    assert mem.optimizer[0] / GIB == pytest.approx(12.32, abs=0.01)


def test_deepspeed_zero_stages_shard_what_they_should():
    # ZeRO paper (Rajbhandari et al. 2020, Fig. 1): Ψ params, K = 12 optimizer bytes, N_d = 8:
    # stage 1: 2Ψ + 2Ψ + KΨ/N_d; stage 2: 2Ψ + (2 + K)Ψ/N_d; stage 3: (2 + 2 + K)Ψ/N_d.
    model = LLAMA_8B
    psi = (32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 128256 * 4096 + 65 * 4096)
    assert psi == 8_030_261_248  # Llama 3.1 8B, 8.03 B
    for stage, expected in [(1, 2 * psi + 2 * psi + 12 * psi / 8), (2, 2 * psi + 14 * psi / 8), (3, 16 * psi / 8)]:
        mem, d = memory(model, 8, framework="deepspeed", zero_stage=stage, global_batch=16)
        states = d["weights.parameters"] + d["gradients.gradients"] + d["optimizer.adam_states"]
        assert states == pytest.approx(expected), stage


def test_fsdp_sixteen_bytes_per_parameter_sharded():
    # torchtitan FSDP2: fp32 sharded params (4) + fp32 sharded grads (4) + AdamW m, v (8) = 16 B / DP.
    mem, d = memory(LLAMA_8B, 8, framework="fsdp", zero_stage=3, global_batch=16, micro_batch=1)
    psi = 8_030_261_248
    assert d["weights.parameters"] + d["gradients.gradients"] + d["optimizer.adam_states"] == pytest.approx(16 * psi / 8)


def test_nanotron_layout_by_hand():
    # nanotron with accumulate_grad_in_fp32 (the Playbook's setting): bf16 weights 2, an fp32
    # accumulation buffer for every parameter (never sharded, FP32GradientAccumulator) 4 + DDP's bf16
    # buckets 2, fp32 master + AdamW m, v 12 sharded by ZeRO-1. Ψ = 8,030,261,248 on 8 GPUs (DP 8):
    # ZeRO-1: 2Ψ + 6Ψ + 12Ψ/8; ZeRO-0: 20Ψ.
    psi = 8_030_261_248
    for zero, states in [(1, 8 * psi + 12 * psi / 8), (0, 20 * psi)]:
        _, d = memory(LLAMA_8B, 8, framework="nanotron", zero_stage=zero, global_batch=16)
        assert d["weights.parameters"] + d["gradients.gradients"] + d["optimizer.adam_states"] == pytest.approx(states)


def korthikanti_layer_bytes(s, b, h, a, t=1, selective=False):
    """Korthikanti et al. 2022, eq. 1 and sec. 4.2: bytes of one GPT layer's activations with tensor and
    sequence parallelism of degree t: s·b·h·(34/t + 5·a·s/(h·t)); selective recompute drops 5as/h."""
    return s * b * h * (34 / t + (0 if selective else 5 * a * s / (h * t)))


# Our departure from the paper: LayerNorm's fp32 mean and rstd (8 bytes per token per norm, two norms).
LAYERNORM_STATS = 2 * 8


@pytest.mark.parametrize("t, recompute", [(1, RECOMPUTE_NONE), (8, RECOMPUTE_NONE), (8, RECOMPUTE_SELECTIVE)])
def test_korthikanti_gpt3_layer_activations(t, recompute):
    s, b, h, a = 2048, 1, 12288, 96
    _, d = memory(GPT3, 8 * t, seq_len=s, tp=t, pp=1, micro_batch=b, recompute=recompute,
                  attention="materialised", dropout=True, global_batch=8)
    per_layer = d["activations.layers"] / GPT3.num_layers
    expected = korthikanti_layer_bytes(s, b, h, a, t, selective=recompute == RECOMPUTE_SELECTIVE)
    expected += s * b * LAYERNORM_STATS / t
    assert per_layer == pytest.approx(expected, rel=1e-9)


def test_full_recompute_keeps_layer_inputs_only():
    # Korthikanti Table 2, "full": 2·s·b·h bytes per layer (the layer input, 2 bytes), divided by t under
    # sequence parallelism.
    s, b, h, t = 2048, 1, 12288, 8
    _, d = memory(GPT3, 64, seq_len=s, tp=t, micro_batch=b, recompute=RECOMPUTE_FULL, global_batch=8)
    assert d["activations.layers"] / 96 == pytest.approx(2 * s * b * h / t)


def test_flash_attention_llama_layer_tensor_by_tensor():
    # Llama 3.1 8B layer, flash attention, no recompute, one 4096-token sequence, eager SwiGLU (deepspeed):
    # bf16: norm inputs 2h, norm outputs 2h (qkv input, MLP input), q h, k and v 2·1024, attention output h,
    # gate/up/silu/product 4·14336; fp32: log-sum-exp 32 heads, two rstd.
    h, kv, f, heads, s = 4096, 1024, 14336, 32, 4096
    per_token = 2 * (4 * h + h + 2 * kv + h + 4 * f) + 4 * heads + 2 * 4
    _, d = memory(LLAMA_8B, 8, framework="deepspeed", seq_len=s, micro_batch=1, recompute=RECOMPUTE_NONE,
                  zero_stage=1, global_batch=8)
    assert d["activations.layers"] / 32 == pytest.approx(per_token * s)


def test_megatron_fused_swiglu_keeps_three_ffn_widths():
    # Megatron's bias_swiglu fusion keeps the fc1 output [gate, up] and the fc2 input: 3·ffn instead of 4.
    h, kv, f, heads, s = 4096, 1024, 14336, 32, 4096
    per_token = 2 * (4 * h + h + 2 * kv + h + 3 * f) + 4 * heads + 2 * 4
    _, d = memory(LLAMA_8B, 8, seq_len=s, micro_batch=1, recompute=RECOMPUTE_NONE, zero_stage=1, global_batch=8)
    assert d["activations.layers"] / 32 == pytest.approx(per_token * s)


def test_context_parallel_divides_tokens():
    # CP splits the sequence: each rank keeps s/CP tokens of every layer.
    _, one = memory(LLAMA_8B, 8, seq_len=8192, cp=1, recompute=RECOMPUTE_FULL, zero_stage=1, global_batch=8)
    _, four = memory(LLAMA_8B, 8, seq_len=8192, cp=4, recompute=RECOMPUTE_FULL, zero_stage=1, global_batch=8)
    assert four["activations.layers"] == pytest.approx(one["activations.layers"] / 4)
    assert four["activations.layers"] / 32 == pytest.approx(2 * 4096 * 8192 / 4)


@pytest.mark.parametrize("framework, bytes_per_logit, with_tp", [("fsdp", 12, 16), ("deepspeed", 12, 12),
                                                                 ("megatron", 6, 6)])
def test_logits_and_loss_buffers(framework, bytes_per_logit, with_tp):
    # s·b·V logits per micro-batch. Eager F.cross_entropy(logits.float()): fp32 log-softmax output, its
    # incoming gradient and the gradient it produces, 12 bytes/logit. Megatron's vocab-parallel CE: bf16
    # logits + an fp32 softmax reused for the gradient, 6 bytes/logit. 8192 × 128256 = 1,050,673,152 logits.
    _, d = memory(LLAMA_8B, 8, framework=framework, seq_len=8192, micro_batch=1, zero_stage=3, global_batch=8)
    assert d["activations.logits_and_loss"] == 8192 * 128256 * bytes_per_logit
    # TP splits the vocabulary: 1/8 of it per rank. torchtitan then computes the loss under loss_parallel,
    # whose backward, (grad_input + exp(x)) * grad_output beside the saved log-softmax x, holds 4 fp32
    # tensors (torch/distributed/tensor/parallel/loss.py).
    _, d8 = memory(LLAMA_8B, 8, framework=framework, seq_len=8192, micro_batch=1, tp=8, zero_stage=1, global_batch=8)
    assert d8["activations.logits_and_loss"] == 8192 * 128256 * with_tp / 8


def test_first_stage_holds_pp_microbatches_and_the_interleaving_factor():
    # 1F1B: rank 0 holds PP micro-batches (Narayanan et al. 2021). Interleaved: PP·(1 + (PP−1)/(PP·VPP))
    # micro-batches' worth of its layers (Korthikanti et al. 2022, sec. 4.2.3). With m ≥ PP micro-batches.
    grid = PlanGrid.build(64, 1024, pp=[4, 4, 8, 8], vpp=[1, 2, 1, 4], micro_batch=1)
    first = inflight_microbatches(grid, 0 * grid.pp)
    assert list(first) == pytest.approx([4, 4 * (1 + 3 / 8), 8, 8 * (1 + 7 / 32)])
    last = inflight_microbatches(grid, grid.pp - 1)
    assert list(last[[0, 2]]) == [1, 1]  # the last stage of plain 1F1B runs one micro-batch at a time


def test_uneven_pipeline_split_puts_ceil_layers_on_the_first_stage():
    # 126 layers over 8 stages (Llama 405B): ceil(126/8) = 16 on stage 0, the last stage gets 126 − 7·16 = 14.
    grid = PlanGrid.build(64, 64, pp=8)
    model = LLAMA_8B.model_copy(update={"num_layers": 126})
    assert stage_load(model, grid, grid.pp * 0).layers[0] == 16
    assert stage_load(model, grid, grid.pp - 1).layers[0] == 14


def test_tied_embeddings_with_pp_keep_a_copy_on_both_ends():
    # Megatron `setup_embeddings_and_output_layer`: the last stage holds the word embeddings as its output
    # layer. Untied vs tied at PP = 2 must hold the same weights on the last stage.
    tied = LLAMA_8B.model_copy(update={"tied_embeddings": True})
    _, untied_d = memory(LLAMA_8B, 8, pp=2, zero_stage=0, global_batch=64)
    _, tied_d = memory(tied, 8, pp=2, zero_stage=0, global_batch=64)
    assert tied_d["weights.parameters"] == untied_d["weights.parameters"]
    # At PP = 1 the tied model stores the table once: 128256 × 4096 × 2 bytes fewer than untied.
    _, untied_1 = memory(LLAMA_8B, 8, pp=1, zero_stage=0, global_batch=64)
    _, tied_1 = memory(tied, 8, pp=1, zero_stage=0, global_batch=64)
    assert untied_1["weights.parameters"] - tied_1["weights.parameters"] == 128256 * 4096 * 2


def test_experts_sharded_by_ep_and_optimizer_by_expert_dp():
    # Mixtral-like MoE: 8 experts of 3·4096·14336 params per layer; EP = 8 puts one expert per GPU.
    from shardwise.engine.model_spec import MoESpec
    moe = LLAMA_8B.model_copy(update={"moe": MoESpec(num_experts=8, top_k=2, expert_ffn_hidden_size=14336)})
    expert = 3 * 4096 * 14336
    _, d = memory(moe, 64, ep=8, tp=1, zero_stage=0, global_batch=64)
    _, d1 = memory(moe, 64, ep=1, tp=1, zero_stage=0, global_batch=64)
    assert d1["weights.parameters"] - d["weights.parameters"] == 32 * 7 * expert * 2
    # Distributed optimizer: experts over expert-DP = 64/8 = 8, the rest over DP = 64.
    _, z = memory(moe, 64, ep=8, tp=1, zero_stage=1, global_batch=64)
    dense = d["weights.parameters"] / 2 - 32 * expert
    assert z["optimizer.adam_states"] == pytest.approx(12 * dense / 64 + 12 * 32 * expert / 8)


def test_qlora_nf4_bits_per_parameter():
    # Dettmers et al. 2023 (QLoRA), sec. 3: NF4 with double quantisation costs 4 + 8/64 + 32/(64·256)
    # = 4.127 bits per quantised parameter. LLaMA-7B: linear weights 32·(4·4096² + 3·4096·11008)
    # = 6,476,005,376 quantised; embeddings, LM head and norms (262,410,240) stay bf16.
    gemm, other = 6_476_005_376, 2 * 32000 * 4096 + 65 * 4096
    _, d = memory(LLAMA1_7B, 1, mode="qlora", zero_stage=0, global_batch=1)
    assert d["weights.frozen_base"] == pytest.approx(gemm * (4 + 8 / 64 + 32 / (64 * 256)) / 8 + other * 2)
    assert d["weights.frozen_base"] / GIB == pytest.approx(3.6, abs=0.05)


def test_lora_adapter_count_matches_peft():
    # PEFT `print_trainable_parameters()` for LLaMA-7B, r = 8, target_modules = [q_proj, v_proj]:
    # "trainable params: 4194304 || all params: 6742609920" (alpaca-lora and LLaMA-Factory logs).
    # Adapters are fp32 with fp32 grads and AdamW m, v: 4 + 4 + 8 bytes each.
    _, d = memory(LLAMA1_7B, 1, mode="lora", lora_rank=8, lora_targets=("q_proj", "v_proj"), zero_stage=0,
                  global_batch=1)
    assert d["weights.lora_adapters"] == 4 * 4_194_304
    assert d["gradients.gradients"] == 4 * 4_194_304
    assert d["optimizer.adam_states"] == 8 * 4_194_304
    assert d["weights.frozen_base"] == 2 * 6_738_415_616  # 6,742,609,920 − 4,194,304, bf16
