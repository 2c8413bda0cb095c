"""Hugging Face config.json -> ModelSpec: real configs parse to the published parameter counts; bad input is
refused with a precise message."""

import json
from pathlib import Path

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.hf_config import model_from_hf_config
from shardwise.engine.model_catalog import get_model
from shardwise.engine.params import active_params, total_params

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"

# fixture -> (published total, published active or None, tolerance, source)
PUBLISHED = {
    "llama-3.1-8b.json": (8_030_261_248, None, 0, "HF safetensors metadata, meta-llama/Llama-3.1-8B"),
    "llama-3.2-1b.json": (1.24e9, None, 0.005, "HF page meta-llama/Llama-3.2-1B: 1.24B"),
    "mistral-7b-v0.1.json": (7.24e9, None, 0.001, "HF page mistralai/Mistral-7B-v0.1: 7.24B"),
    "mixtral-8x7b-v0.1.json": (46.7e9, 12.9e9, 0.005, "Mistral AI Mixtral post: 46.7B total, 12.9B per token"),
    "qwen2.5-7b.json": (7.61e9, None, 0.005, "Qwen2.5-7B card: 7.61B"),
    "qwen3-8b.json": (8.2e9, None, 0.005, "Qwen3-8B card: 8.2B"),
    "qwen3-30b-a3b.json": (30.5e9, 3.3e9, 0.02, "Qwen3-30B-A3B card: 30.5B total, 3.3B activated"),
    "qwen1.5-moe-a2.7b.json": (14.3e9, 2.7e9, 0.01, "Qwen1.5-MoE-A2.7B card: 14.3B total, 2.7B activated"),
    "deepseek-v3.json": (671e9, None, 0.001, "DeepSeek-V3 report: 671B main model (MTP excluded)"),
    "deepseek-v2-lite.json": (15.7e9, None, 0.005, "DeepSeek-V2-Lite card: 15.7B total"),
    "gemma-2-9b.json": (9.24e9, None, 0.001, "HF page google/gemma-2-9b: 9.24B"),
    "gemma-3-27b-it.json": (27.0e9, None, 0.005, "Gemma 3 report Table 1: 1,416M embedding + 25,600M non-embedding"),
    "phi-3-mini-4k-instruct.json": (3.8e9, None, 0.01, "Phi-3 report: 3.8B"),
    "phi-4.json": (14.7e9, None, 0.005, "HF page microsoft/phi-4: 14.7B"),
    "olmo-2-1124-7b.json": (7.30e9, None, 0.005, "HF page allenai/OLMo-2-1124-7B: 7.3B"),
    "falcon-7b.json": (6.92e9, None, 0.005, "HF page tiiuae/falcon-7b: 6.92B"),
    "gpt2.json": (124_439_808, None, 0, "karpathy/llm.c train_gpt2: num_parameters 124439808"),
    "mpt-7b.json": (6.7e9, None, 0.01, "mosaicml/mpt-7b card: 6.7B"),
}


def test_every_fixture_has_an_expectation():
    assert {p.name for p in FIXTURES.glob("*.json")} == set(PUBLISHED)


@pytest.mark.parametrize("fixture", sorted(PUBLISHED))
def test_real_configs_parse_to_published_counts(fixture):
    total, active, tol, _source = PUBLISHED[fixture]
    model = model_from_hf_config(FIXTURES / fixture)
    if tol == 0:
        assert total_params(model) == total
    else:
        assert total_params(model) == pytest.approx(total, rel=tol)
    if active is not None:
        assert active_params(model) == pytest.approx(active, rel=tol)


# The same architecture read two ways (config.json vs the catalog's data) must agree field by field.
SAME_AS_CATALOG = {"llama-3.1-8b.json": "llama-3.1-8b", "llama-3.2-1b.json": "llama-3.2-1b",
                   "mistral-7b-v0.1.json": "mistral-7b", "mixtral-8x7b-v0.1.json": "mixtral-8x7b",
                   "qwen2.5-7b.json": "qwen2.5-7b", "qwen3-8b.json": "qwen3-8b", "qwen3-30b-a3b.json": "qwen3-30b-a3b",
                   "deepseek-v3.json": "deepseek-v3", "deepseek-v2-lite.json": "deepseek-v2-lite",
                   "gemma-2-9b.json": "gemma-2-9b", "gemma-3-27b-it.json": "gemma-3-27b",
                   "phi-3-mini-4k-instruct.json": "phi-3-mini", "phi-4.json": "phi-4", "olmo-2-1124-7b.json": "olmo-2-7b",
                   "falcon-7b.json": "falcon-7b"}
IGNORED = {"name", "source", "max_position_embeddings", "activation"}


@pytest.mark.parametrize("fixture, model_id", SAME_AS_CATALOG.items())
def test_config_and_catalog_agree(fixture, model_id):
    parsed, catalog = model_from_hf_config(FIXTURES / fixture), get_model(model_id)
    assert parsed.head_size == catalog.head_size  # head_dim may be explicit in one and derived in the other
    assert parsed.model_dump(exclude=IGNORED | {"head_dim"}) == catalog.model_dump(exclude=IGNORED | {"head_dim"})


def test_json_text_dict_and_folder_are_accepted(tmp_path):
    text = (FIXTURES / "qwen3-8b.json").read_text()
    assert total_params(model_from_hf_config(text)) == total_params(model_from_hf_config(json.loads(text)))
    (tmp_path / "Qwen3-8B").mkdir()
    (tmp_path / "Qwen3-8B" / "config.json").write_text(text)
    model = model_from_hf_config(tmp_path / "Qwen3-8B")
    assert model.name == "Qwen3-8B" and model.qk_norm


def test_nested_text_config_and_layer_types():
    wrapped = json.loads((FIXTURES / "gemma-3-27b-it.json").read_text())
    model = model_from_hf_config(wrapped)
    assert (model.num_layers, model.vocab_size, model.head_size) == (62, 262_208, 128)  # vocab: Gemma3TextConfig default
    inner = {**wrapped["text_config"], "layer_types": ["sliding_attention", "full_attention"] * 31}
    assert model_from_hf_config(inner).sliding_window_layer_fraction == 1 / 2
    assert "layer_types" in _error({**inner, "layer_types": ["full_attention"] * 3})


def test_nemotron_config_matches_the_report():
    # Nemotron-4 340B (report Table 1) written as a transformers NemotronConfig.
    config = {"model_type": "nemotron", "hidden_size": 18432, "num_hidden_layers": 96, "num_attention_heads": 96,
              "num_key_value_heads": 8, "intermediate_size": 73728, "vocab_size": 256000, "hidden_act": "relu2",
              "tie_word_embeddings": False}
    model = model_from_hf_config(config)
    assert not model.gated_mlp and model.norm == "layernorm"
    assert total_params(model) == pytest.approx(9.4e9 + 331.6e9, rel=0.001)  # report: 9.4B embedding + 331.6B


def _error(source) -> str:
    with pytest.raises(ShardwiseInputError) as err:
        model_from_hf_config(source)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_invalid_json_reports_line_and_column():
    message = _error('{\n  "model_type": "llama",\n  "hidden_size": 4096,,\n}')
    assert "not valid JSON" in message and "line 3 column" in message


def test_not_an_object():
    assert "JSON object" in _error("[1, 2, 3]")


def test_unsupported_model_type_lists_the_supported_ones():
    message = _error({"model_type": "mamba", "hidden_size": 768})
    assert "unsupported model_type 'mamba'" in message and "llama" in message and "qwen3_moe" in message


def test_missing_model_type():
    assert "no 'model_type'" in _error({"hidden_size": 4096})


def test_missing_field_names_it_and_the_model_type():
    config = json.loads((FIXTURES / "llama-3.1-8b.json").read_text())
    del config["num_hidden_layers"]
    message = _error(config)
    assert "'num_hidden_layers'" in message and "'llama'" in message and "missing" in message


@pytest.mark.parametrize("value, words", [("4096", "positive integer"), (0, "positive"), (-8, "positive"),
                                          (4096.5, "positive integer"), (True, "positive integer")])
def test_wrong_types_and_non_positive_values(value, words):
    config = {**json.loads((FIXTURES / "llama-3.1-8b.json").read_text()), "hidden_size": value}
    message = _error(config)
    assert "'hidden_size'" in message and words in message


def test_inconsistent_heads_are_explained():
    config = {**json.loads((FIXTURES / "llama-3.1-8b.json").read_text()), "num_key_value_heads": 5}
    assert "num_kv_heads" in _error(config) or "num_key_value_heads" in _error(config)


@pytest.mark.parametrize("config", [{"model_type": "t5", "d_model": 512, "is_encoder_decoder": True},
                                    {"model_type": "bart", "d_model": 1024},
                                    {"model_type": "bert", "hidden_size": 768}])
def test_encoder_models_are_refused_clearly(config):
    assert "not a decoder-only" in _error(config)


def test_missing_file():
    assert "does not exist" in _error("/nonexistent/config.json")


def test_non_leading_dense_layers_are_refused():
    config = {**json.loads((FIXTURES / "qwen3-30b-a3b.json").read_text()), "mlp_only_layers": [5, 9]}
    assert "mlp_only_layers" in _error(config)
