"""Independent oracle: transformers builds each supported architecture on the meta device (no memory) and
counts its parameters; our count for the same config must match exactly, layer for layer.

Few layers at real widths (then every layer is the same), so the test stays fast.
"""

import json
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from shardwise.engine.hf_config import model_from_hf_config  # noqa: E402
from shardwise.engine.params import total_params  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"
DROP = {"quantization_config", "auto_map", "architectures", "transformers_version", "torch_dtype", "_name_or_path"}


def transformers_count(raw: dict, layers: int) -> int:
    config = transformers.AutoConfig.for_model(raw["model_type"], **{k: v for k, v in raw.items()
                                                                      if k not in DROP | {"model_type"}})
    config.num_hidden_layers = layers  # attribute_map spells it n_layer / n_layers where needed
    if hasattr(config, "layer_types") and config.layer_types is not None:
        config.layer_types = config.layer_types[:layers]
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())  # shared (tied) tensors once


def ours(raw: dict, layers: int) -> int:
    return total_params(model_from_hf_config(raw).model_copy(update={"num_layers": layers}))


# Weights shardwise leaves out on purpose (far below 0.01 % of the model): Qwen2-MoE's shared_expert_gate,
# a (hidden -> 1) projection per layer; Phi-2's lm_head bias (one per vocabulary entry).
KNOWN_EXTRA = {"qwen2_moe": lambda raw, layers: raw["hidden_size"] * layers,
               "phi": lambda raw, layers: raw["vocab_size"]}

# Architectures without a fixture file, as their published configs spell them.
INLINE = {
    # Nemotron-4 15B (report Table 1) as a transformers NemotronConfig
    "nemotron-4-15b": {"model_type": "nemotron", "hidden_size": 6144, "num_hidden_layers": 32, "num_attention_heads": 48,
                       "num_key_value_heads": 8, "intermediate_size": 24576, "vocab_size": 256000,
                       "hidden_act": "relu2", "tie_word_embeddings": False},
    # EleutherAI/pythia-160m config.json
    "pythia-160m": {"model_type": "gpt_neox", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                    "intermediate_size": 3072, "vocab_size": 50304, "max_position_embeddings": 2048, "rotary_pct": 0.25,
                    "use_parallel_residual": True, "tie_word_embeddings": False, "hidden_act": "gelu"},
    # microsoft/phi-2 config.json
    "phi-2": {"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
              "intermediate_size": 10240, "vocab_size": 51200, "partial_rotary_factor": 0.4, "hidden_act": "gelu_new",
              "tie_word_embeddings": False, "max_position_embeddings": 2048},
    # Qwen/Qwen3-0.6B (tied embeddings)
    "qwen3-0.6b": {"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
                   "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936,
                   "tie_word_embeddings": True},
}
CASES = {p.name: json.loads(p.read_text()) for p in FIXTURES.glob("*.json")} | INLINE


@pytest.mark.parametrize("case", sorted(CASES))
def test_parameter_count_matches_transformers(case):
    raw = CASES[case]
    if raw["model_type"] == "gemma3":  # the language model of the multimodal checkpoint
        raw = {**raw["text_config"], "model_type": "gemma3_text"}
    layers = (raw.get("first_k_dense_replace") or 0) + 2
    extra = KNOWN_EXTRA.get(raw["model_type"], lambda raw, layers: 0)(raw, layers)
    assert ours(raw, layers) + extra == transformers_count(raw, layers)
