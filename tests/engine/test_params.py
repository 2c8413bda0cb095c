"""Parameter counts of catalog models against the PUBLISHED numbers (model cards, papers), never our own output.

Exact counts come from the checkpoints' safetensors metadata as shown on the Hugging Face model pages
(total_size / 2 bytes for bf16) or from parameter tables in the papers; rounded ones from model cards.
"""

import pytest

from shardwise.engine.model_catalog import get_model
from shardwise.engine.params import active_params, embedding_params, param_breakdown, total_params

EXACT = [
    # meta-llama/Llama-3.1-8B, -70B, -405B: safetensors total_size 16,060,522,496 / 141,107,412,992 /
    # 811,706,777,600 bytes in bf16 (the numbers the issue quotes: 8.03 B, 70.55 B, 405.85 B).
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3.1-405b", 405_853_388_800),
    # Mixtral-8x7B: Mistral AI's release post "46.7B total parameters"; HF page 46,702,792,704.
    ("mixtral-8x7b", 46_702_792_704),
]


@pytest.mark.parametrize("model_id, expected", EXACT)
def test_exact_published_totals(model_id, expected):
    assert total_params(get_model(model_id)) == expected


ROUNDED = [
    # (id, published total, published active, relative tolerance from the rounding of the source)
    ("llama-2-7b", 6.74e9, None, 0.001),  # HF page meta-llama/Llama-2-7b-hf: 6.74B
    ("llama-2-13b", 13.0e9, None, 0.005),  # Llama 2 paper Table 1: 13B; HF page 13.0B
    ("llama-2-70b", 69.0e9, None, 0.005),  # HF page meta-llama/Llama-2-70b-hf: 69.0B (68,976,648,192)
    ("llama-3.2-1b", 1.24e9, None, 0.005),  # HF page meta-llama/Llama-3.2-1B: 1.24B (tied embeddings)
    ("llama-3.2-3b", 3.21e9, None, 0.005),  # Llama 3.2 model card: 3.21B
    ("mistral-7b", 7.24e9, None, 0.001),  # HF page mistralai/Mistral-7B-v0.1: 7.24B
    ("mixtral-8x7b", 46.7e9, 12.9e9, 0.005),  # Mistral AI "Mixtral of experts" post: 46.7B total, 12.9B per token
    ("mixtral-8x22b", 141e9, 39e9, 0.01),  # Mistral AI "Cheaper, Better, Faster, Stronger" post: 141B, 39B active
    ("qwen2.5-0.5b", 0.49e9, None, 0.01),  # Qwen2.5-0.5B card: 0.49B
    ("qwen2.5-1.5b", 1.54e9, None, 0.005),  # Qwen2.5-1.5B card: 1.54B
    ("qwen2.5-3b", 3.09e9, None, 0.005),  # Qwen2.5-3B card: 3.09B
    ("qwen2.5-7b", 7.61e9, None, 0.005),  # Qwen2.5-7B card: 7.61B (non-embedding 6.53B)
    ("qwen2.5-14b", 14.7e9, None, 0.005),  # Qwen2.5-14B card: 14.7B
    ("qwen2.5-72b", 72.7e9, None, 0.005),  # Qwen2.5-72B card: 72.7B
    ("qwen3-8b", 8.2e9, None, 0.005),  # Qwen3-8B card: 8.2B (non-embedding 6.95B)
    ("qwen3-32b", 32.8e9, None, 0.005),  # Qwen3-32B card: 32.8B
    ("qwen3-30b-a3b", 30.5e9, 3.3e9, 0.02),  # Qwen3-30B-A3B card: 30.5B total, 3.3B activated
    ("qwen3-235b-a22b", 235e9, 22e9, 0.01),  # Qwen3-235B-A22B card: 235B total, 22B activated
    ("deepseek-v2", 236e9, None, 0.005),  # DeepSeek-V2 paper abstract: 236B total
    ("deepseek-v2-lite", 15.7e9, None, 0.005),  # DeepSeek-V2-Lite card: 15.7B (16B) total
    ("deepseek-v3", 671e9, None, 0.001),  # DeepSeek-V3 report: 671B total (main model; MTP module adds 14B)
    ("phi-3-mini", 3.8e9, None, 0.01),  # Phi-3 report: phi-3-mini, 3.8B
    ("phi-3-medium", 14e9, None, 0.01),  # Phi-3 report: phi-3-medium, 14B
    ("phi-4", 14.7e9, None, 0.005),  # HF page microsoft/phi-4: 14.7B
    ("gpt-3-175b", 175.0e9, None, 0.005),  # Brown et al. 2020 Table 2.1: 175.0B
    ("olmo-2-7b", 7.30e9, None, 0.005),  # HF page allenai/OLMo-2-1124-7B: 7.3B
    ("olmo-2-13b", 13.7e9, None, 0.005),  # HF page allenai/OLMo-2-1124-13B: 13.7B
    ("falcon-7b", 6.92e9, None, 0.005),  # HF page tiiuae/falcon-7b: 6.92B
    ("gemma-3-27b", 27.4e9 - 0.417e9, None, 0.005),  # Gemma 3 report Table 1: 27B = 417M vision + 1,416M emb + 25,600M
    ("playbook-1b", 1.34e9, None, 0.005),  # /work/shared/calibration sweep: "1.34 (est. from config)"
    ("playbook-8b", 8.86e9, None, 0.005),  # /work/shared/calibration sweep: "8.86 (est. from config)"
]


@pytest.mark.parametrize("model_id, total, active, tol", ROUNDED)
def test_published_totals_and_active(model_id, total, active, tol):
    model = get_model(model_id)
    assert total_params(model) == pytest.approx(total, rel=tol)
    if active is not None:
        assert active_params(model) == pytest.approx(active, rel=tol)


def test_deepseek_v3_active_excludes_only_the_input_embedding():
    # DeepSeek-V3 README_WEIGHTS.md: "Activation parameters: 36.6B (including 0.9B for the output Head)".
    # Our active count also includes the input embedding (as Mistral counts Mixtral's 12.9B), so
    # active - embedding must equal 36.6B; with it, 37.5B rounds to the headline "37B activated".
    model = get_model("deepseek-v3")
    assert active_params(model) - embedding_params(model) == pytest.approx(36.6e9, abs=0.05e9)
    assert embedding_params(model) == 129_280 * 7168  # "0.9B" each for embedding and output head


def test_gemma_2_non_embedding_counts_match_the_paper():
    # Gemma 2 report (arXiv:2408.00118) Table 2, non-embedding parameters.
    for model_id, non_embedding in [("gemma-2-2b", 2_024_517_888), ("gemma-2-9b", 8_324_201_984),
                                    ("gemma-2-27b", 26_047_480_320)]:
        model = get_model(model_id)
        assert total_params(model) - embedding_params(model) == non_embedding


def test_nemotron_4_340b_split_matches_the_report():
    # Nemotron-4 340B report: "9.4 billion embedding parameters and 331.6 billion non-embedding parameters".
    b = param_breakdown(get_model("nemotron-4-340b"))
    assert b.embedding + b.output_layer == pytest.approx(9.4e9, rel=0.005)
    assert b.total - b.embedding - b.output_layer == pytest.approx(331.6e9, rel=0.001)


def test_hand_count_of_llama_3_1_8b_by_part():
    # Written out from the architecture (Llama 3 paper Table 3): 32 layers, d=4096, 32 heads of 128, 8 KV heads,
    # SwiGLU 14336, vocab 128256, untied, RMSNorm.
    d, ffn, kv_dim, vocab, layers = 4096, 14336, 8 * 128, 128_256, 32
    attention = d * d + 2 * d * kv_dim + d * d  # q, k, v, o
    mlp = 3 * d * ffn
    norms = 2 * d
    expected = layers * (attention + mlp + norms) + 2 * vocab * d + d
    assert total_params(get_model("llama-3.1-8b")) == expected


def test_full_width_qk_norm_and_biasless_layernorm():
    # OLMo 2 normalises q and k over all heads (q_norm: RMSNorm(num_heads * head_dim)); MPT's LayerNorm has no bias.
    olmo = get_model("olmo-2-7b")
    per_head = olmo.model_copy(update={"qk_norm_full_width": False})
    assert total_params(olmo) - total_params(per_head) == 32 * (2 * 4096 - 2 * 128)
    mpt = get_model("mpt-7b")
    with_bias = mpt.model_copy(update={"norm_bias": True})
    assert total_params(with_bias) - total_params(mpt) == (2 * 32 + 1) * 4096


@pytest.mark.parametrize("model_id, total, active", [("gpt-oss-120b", 116.83e9, 5.13e9), ("gpt-oss-20b", 20.91e9, 3.61e9)])
def test_gpt_oss_counts_match_the_model_card(model_id, total, active):
    # OpenAI gpt-oss model card Table 1: total 116.83B / 20.91B; active per token 5.13B / 3.61B, which excludes
    # the input embedding (our active count includes it, as for DeepSeek above).
    model = get_model(model_id)
    assert total_params(model) == pytest.approx(total, rel=0.0005)
    assert active_params(model) - embedding_params(model) == pytest.approx(active, rel=0.002)
