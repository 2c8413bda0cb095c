"""FLOP counts: hand calculations with their sources, and PyTorch's own FLOP counter
(torch.utils.flop_counter.FlopCounterMode) on real-width layers built on the meta device."""

from __future__ import annotations

import math

import pytest

from shardwise.engine.flops import (attended_keys_per_query, attention_core_flops_per_token,
                                    convert_mfu, hardware_flops_per_token, llm_foundry_flops_per_token,
                                    lora_trainable_params, matmul_params, megatron_flops_per_token,
                                    model_flops_per_token)
from shardwise.engine.model_catalog import get_model
from shardwise.engine.model_spec import ModelSpec, MoESpec
from shardwise.engine.training import TrainingSetup

LLAMA3_8B = ModelSpec(name="llama3-8b", num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                      ffn_hidden_size=14336, vocab_size=128256)


def test_llama3_8b_training_flops_by_hand():
    """Llama-3-8B, seq 8192. Weight entries per layer (Llama 3 paper Table 3 shapes):
    q 4096·4096 + k,v 2·4096·1024 + o 4096·4096 = 41,943,040; MLP 3·4096·14336 = 176,160,768.
    32 layers: 6,979,321,856; logits 128256·4096 = 525,336,576 -> 7,504,658,432 GEMM weights.
    6N = 45,027,950,592 FLOPs/token. Attention core (causal, half of s): per layer
    2·(s/2)·heads·(d+d) = 2·4096·32·256 = 67,108,864, ×32 layers ×3 = 6,442,450,944.
    Total 51,470,401,536 FLOPs per token (Kaplan et al. 2020 6N + Narayanan et al. 2021 attention term)."""
    assert matmul_params(LLAMA3_8B).total == 7_504_658_432
    assert attention_core_flops_per_token(LLAMA3_8B, 8192) == 32 * 67_108_864
    assert model_flops_per_token(LLAMA3_8B, 8192) == 51_470_401_536


def test_megatron_convention_counts_causal_attention_full():
    """Megatron's num_floating_point_operations (training.py): same GEMMs, attention 12·L·s·(heads·d)
    = 12·32·8192·4096 = 12,884,901,888 -> 57,912,852,480 FLOPs/token."""
    assert megatron_flops_per_token(LLAMA3_8B, 8192) == 45_027_950_592 + 12_884_901_888


def test_llm_foundry_convention_reproduces_its_reported_mfu():
    """llm-foundry's benchmark table (scripts/train/benchmarking/README.md, MPT-7b, 8×H100, seq 2048,
    micro-batch 6): MFU 46.44 % and 10,643 tokens/s/GPU against a 989 TFLOP/s peak imply
    0.4644·989e12/10643 = 4.3155e10 FLOPs per token under llm-foundry's own formula
    6·params + 12·L·d·s. Ours must reproduce it (the table rounds MFU to 0.01 %)."""
    implied = 0.4644 * 989e12 / 10643
    assert llm_foundry_flops_per_token(get_model("MPT-7b"), 2048) == pytest.approx(implied, rel=0.003)


def test_convert_mfu_round_trip_and_ratio():
    mfu = 0.40
    as_megatron = convert_mfu(mfu, LLAMA3_8B, 8192, "shardwise", "megatron")
    assert as_megatron == pytest.approx(0.40 * 57_912_852_480 / 51_470_401_536)
    assert convert_mfu(as_megatron, LLAMA3_8B, 8192, "megatron", "shardwise") == pytest.approx(mfu)
    with pytest.raises(ValueError):
        convert_mfu(mfu, LLAMA3_8B, 8192, "shardwise", "palm")


def test_recompute_adds_hardware_flops():
    """Selective recompute repeats the attention core forward (2,147,483,648/token); full repeats
    every layer's forward: 2·6,979,321,856 + 2,147,483,648."""
    base = model_flops_per_token(LLAMA3_8B, 8192)
    assert hardware_flops_per_token(LLAMA3_8B, 8192, "none") == base
    assert hardware_flops_per_token(LLAMA3_8B, 8192, "selective") - base == 2_147_483_648
    assert hardware_flops_per_token(LLAMA3_8B, 8192, "full") - base == 2 * 6_979_321_856 + 2_147_483_648


def test_lora_skips_weight_gradients_of_the_frozen_base():
    """LoRA rank 16 on q,k,v,o,gate,up,down of Llama-3-8B: adapter entries per layer
    16·[(4096+4096) + (4096+1024)·2 + (4096+4096) + (4096+14336)·3] = 16·81,920 = 1,310,720;
    32 layers -> 41,943,040. Per token: 4·7,504,658,432 (forward + data gradient) + 6·41,943,040
    + 3·attention."""
    setup = TrainingSetup(seq_len=8192, mode="lora", lora_rank=16)
    assert lora_trainable_params(LLAMA3_8B, setup) == 41_943_040
    expected = 4 * 7_504_658_432 + 6 * 41_943_040 + 6_442_450_944
    assert model_flops_per_token(LLAMA3_8B, 8192, setup) == expected


def test_sliding_window_average_keys():
    """Causal window w over s positions: mean of min(i, w) ≈ w − w²/(2s); s=8192, w=4096 -> 3072."""
    assert attended_keys_per_query(8192, 4096) == 3072
    assert attended_keys_per_query(8192, None) == 4096
    assert attended_keys_per_query(8192, None, causal=False) == 8192


def test_moe_counts_active_experts_only():
    """Mixtral-8x7B: per layer attention 4096·(4096+2·1024+4096) = 41,943,040, top-2 of 3·4096·14336
    = 352,321,536, router 4096·8 = 32,768; 32 layers + logits 32000·4096."""
    m = get_model("Mixtral-8x7B")
    mm = matmul_params(m)
    assert mm.attention == 32 * 41_943_040
    assert mm.mlp == 32 * 352_321_536
    assert mm.router == 32 * 32_768
    assert mm.logits == 32000 * 4096


# --- Oracle: PyTorch's FLOP counter on real-width layers (meta device: no memory, no compute) ----------
torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402


def _attention(x, wq, wk, wv, wo, heads, kv_heads, head_dim):
    b, s, _ = x.shape
    q = (x @ wq).view(b, s, heads, head_dim).transpose(1, 2)
    k = (x @ wk).view(b, s, kv_heads, head_dim).transpose(1, 2)
    v = (x @ wv).view(b, s, kv_heads, head_dim).transpose(1, 2)
    rep = heads // kv_heads
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    # Explicit matmuls: FlopCounterMode counts the full s×s product (no causal saving).
    p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(head_dim), dim=-1)
    o = (p @ v).transpose(1, 2).reshape(b, s, heads * head_dim)
    return o @ wo


def _swiglu(x, w_gate, w_up, w_down):
    return (torch.nn.functional.silu(x @ w_gate) * (x @ w_up)) @ w_down


def _count(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def _param(*shape):
    return torch.empty(*shape, device="meta", requires_grad=True)


@pytest.mark.parametrize("seq", [512, 4096])
def test_dense_block_matches_torch_flop_counter(seq):
    """Two Llama-3-8B layers + logit layer, forward + backward, at real width."""
    m = LLAMA3_8B.model_copy(update={"num_layers": 2})
    h, heads, kv, d, ffn, vocab = 4096, 32, 8, 128, 14336, 128256
    b = 1
    emb = _param(b, seq, h)
    layers = [dict(wq=_param(h, heads * d), wk=_param(h, kv * d), wv=_param(h, kv * d), wo=_param(heads * d, h),
                   g=_param(h, ffn), u=_param(h, ffn), dn=_param(ffn, h)) for _ in range(2)]
    w_out = _param(h, vocab)

    def step():
        x = emb * 1.0
        for w in layers:
            x = x + _attention(x, w["wq"], w["wk"], w["wv"], w["wo"], heads, kv, d)
            x = x + _swiglu(x, w["g"], w["u"], w["dn"])
        (x @ w_out).sum().backward()

    measured = _count(step)
    attn_full = attention_core_flops_per_token(m, seq, causal=False)
    ours = 6 * matmul_params(m).total + 3 * attn_full
    assert measured == pytest.approx(ours * b * seq, rel=0.01)


def test_moe_block_matches_torch_flop_counter():
    """One Mixtral-8x7B layer at real width, tokens split evenly over experts (top-2 of 8)."""
    m = get_model("Mixtral-8x7B").model_copy(update={"num_layers": 1})
    h, heads, kv, d, ffn, E, k, vocab = 4096, 32, 8, 128, 14336, 8, 2, 32000
    seq = 1024
    x0 = _param(1, seq, h)
    wq, wk, wv, wo = _param(h, heads * d), _param(h, kv * d), _param(h, kv * d), _param(heads * d, h)
    router = _param(h, E)
    experts = [(_param(h, ffn), _param(h, ffn), _param(ffn, h)) for _ in range(E)]
    w_out = _param(h, vocab)
    per_expert = seq * k // E

    def step():
        x = x0 * 1.0
        x = x + _attention(x, wq, wk, wv, wo, heads, kv, d)
        flat = x.view(seq, h)
        _ = flat @ router
        outs = [_swiglu(flat[:per_expert], g, u, dn) for g, u, dn in experts]
        y = torch.cat(outs).view(k, seq, h).sum(0)
        ((flat + y) @ w_out).sum().backward()

    measured = _count(step)
    ours = 6 * matmul_params(m).total + 3 * attention_core_flops_per_token(m, seq, causal=False)
    assert measured == pytest.approx(ours * seq, rel=0.01)
