"""The bundled model catalog: coverage, forgiving lookup, clear errors, and agreement with independent sources."""

import csv
import re
from pathlib import Path

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.model_catalog import find_model, get_model, list_catalog, list_models, model_ids

CALIBRATION = Path(__file__).resolve().parents[2].parent / "shared" / "calibration" / "models.csv"
REQUIRED = ["llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b", "llama-3.1-70b",
            "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b", "mistral-7b", "mixtral-8x7b",
            "mixtral-8x22b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b",
            "qwen2.5-72b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v2", "deepseek-v3",
            "gemma-2-9b", "gemma-2-27b", "gemma-3-27b", "phi-3-mini", "phi-3-medium", "phi-4", "gpt-3-175b",
            "nemotron-4-340b", "olmo-2-7b", "olmo-2-13b", "falcon-7b", "falcon-40b", "mpt-7b", "mpt-70b",
            "playbook-1b", "playbook-8b"]


def test_catalog_covers_the_popular_models():
    assert len(list_models()) >= 30
    assert set(REQUIRED) <= set(model_ids())


def test_ids_are_stable_lower_case_slugs_and_every_entry_has_a_source():
    for entry in list_catalog():
        assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", entry.id), entry.id
        assert entry.spec.source, entry.id


@pytest.mark.parametrize("alias", ["llama-3.1-70b", "Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "llama3.1-70b",
                                   "70b llama 3.1", "LLAMA 3.1 70B", "meta-llama/Llama-3.1-70B-Instruct",
                                   "meta-llama/Meta-Llama-3.1-70B"])
def test_forgiving_aliases(alias):
    assert find_model(alias).id == "llama-3.1-70b"


def test_other_spellings():
    assert find_model("Qwen/Qwen3-30B-A3B").id == "qwen3-30b-a3b"
    assert find_model("mistralai/Mixtral-8x7B-Instruct-v0.1").id == "mixtral-8x7b"
    assert find_model("deepseek-ai/DeepSeek-V3").id == "deepseek-v3"
    assert find_model("google/gemma-2-9b-it").id == "gemma-2-9b"
    assert find_model("Llama-like 8B (playbook)").id == "playbook-8b"
    assert get_model("llama-3-8b") != get_model("llama-3.1-8b")  # same shape, different context length


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ShardwiseInputError) as err:
        get_model("llama-3.1-7b")
    message = str(err.value)
    assert "unknown model 'llama-3.1-7b'" in message and "llama-3.1-" in message and "\n" not in message


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_name_is_refused(bad):
    with pytest.raises(ShardwiseInputError):
        get_model(bad)


def test_architecture_details_from_the_configs():
    v3 = get_model("deepseek-v3")
    assert (v3.moe.num_experts, v3.moe.top_k, v3.moe.num_shared_experts, v3.moe.first_k_dense_layers) == (256, 8, 1, 3)
    assert (v3.mla.q_lora_rank, v3.mla.kv_lora_rank, v3.mla.qk_rope_head_dim) == (1536, 512, 64)
    assert v3.num_moe_layers == 58
    gemma = get_model("gemma-3-27b")
    assert gemma.norms_per_layer == 4 and gemma.qk_norm and gemma.tied_embeddings
    assert gemma.sliding_window_layer_fraction == pytest.approx(52 / 62)  # 10 of 62 layers are global
    assert get_model("qwen2.5-7b").qkv_bias and not get_model("qwen3-8b").qkv_bias
    falcon = get_model("falcon-7b")
    assert falcon.parallel_block and falcon.kv_heads == 1 and falcon.norms_per_layer == 1


def _calibration_rows():
    with open(CALIBRATION, newline="") as f:
        return {row["model"]: row for row in csv.DictReader(f)}


# models.csv (shared calibration data, sourced from NeMo configs and the nanotron script) -> our ids.
CALIBRATION_IDS = {"Llama 3 / 3.1 8B": "llama-3.1-8b", "Llama 3 / 3.1 70B": "llama-3.1-70b",
                   "Llama 3.1 405B": "llama-3.1-405b", "Llama 2 7B": "llama-2-7b", "Llama 2 13B": "llama-2-13b",
                   "Llama 2 70B": "llama-2-70b", "Mixtral 8x7B": "mixtral-8x7b", "Mixtral 8x22B": "mixtral-8x22b",
                   "Nemotron-4 15B": "nemotron-4-15b", "Nemotron-4 340B": "nemotron-4-340b",
                   "Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen3-235B-A22B": "qwen3-235b-a22b",
                   "Ultra-Scale Playbook 1B": "playbook-1b", "Ultra-Scale Playbook 3B": "playbook-3b",
                   "Ultra-Scale Playbook 8B": "playbook-8b"}


@pytest.mark.skipif(not CALIBRATION.exists(), reason="shared calibration data not beside the checkout")
@pytest.mark.parametrize("name, model_id", CALIBRATION_IDS.items())
def test_shapes_agree_with_the_calibration_table(name, model_id):
    row, model = _calibration_rows()[name], get_model(model_id)
    first_int = lambda text: int(re.match(r"\d+", text).group())  # "32 (MHA per script default)" -> 32
    assert model.num_layers == first_int(row["layers"])
    assert model.hidden_size == first_int(row["hidden"])
    assert model.num_attention_heads == first_int(row["heads"])
    assert model.kv_heads == first_int(row["kv_heads"])
    assert model.vocab_size == first_int(row["vocab"])
    if row["moe_experts"]:
        assert (model.moe.num_experts, model.moe.top_k) == (int(row["moe_experts"]), int(row["moe_topk"]))
        assert model.moe.expert_ffn_hidden_size == int(row["moe_ffn_hidden"])
    else:
        assert model.ffn_hidden_size == first_int(row["ffn_hidden"])
