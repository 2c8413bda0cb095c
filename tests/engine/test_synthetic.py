"""A bare parameter count -> an approximate Llama-3-like shape."""

import math

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.params import total_params
from shardwise.engine.synthetic import model_from_param_count


@pytest.mark.parametrize("n", [1e6, 3.3e6, 1.2e8, 1.24e9, 7e9, 13e9, 70e9, 175e9, 405e9, 1e12, 1e14])
def test_count_within_two_percent_and_flagged(n):
    model = model_from_param_count(n)
    assert model.approximate
    assert abs(total_params(model) - n) / n <= 0.02


def test_llama_3_1_8b_count_gives_the_llama_3_1_8b_shape():
    # Llama 3 paper Table 3: 8B is 32 layers x 4096, 32 heads, 8 KV heads, FFN 14336, vocab 128256.
    model = model_from_param_count(8_030_261_248)
    shape = (model.num_layers, model.hidden_size, model.num_attention_heads, model.kv_heads, model.ffn_hidden_size,
             model.vocab_size, model.tied_embeddings)
    assert shape == (32, 4096, 32, 8, 14336, 128_256, False)


@pytest.mark.parametrize("n", [30e9, 70e9, 405e9])
def test_standard_shape_rules(n):
    model = model_from_param_count(n)
    assert model.head_size == 128 and model.kv_heads == 8 and model.gated_mlp
    assert model.ffn_hidden_size % 256 == 0 and model.ffn_hidden_size >= 3.5 * model.hidden_size
    # width/depth near Llama 3's ~128 (8B: 4096/32, 405B: 16384/126): within a factor of 2
    assert abs(math.log(model.hidden_size / model.num_layers / 128)) < math.log(2)


def test_larger_counts_give_larger_models():
    sizes = [total_params(model_from_param_count(n)) for n in (1e9, 1e10, 1e11, 1e12)]
    assert sizes == sorted(sizes)


@pytest.mark.parametrize("bad", [0, -5, 5e5, 2e14, float("nan"), float("inf")])
def test_absurd_counts_are_refused(bad):
    with pytest.raises(ShardwiseInputError) as err:
        model_from_param_count(bad)
    assert "parameter count" in str(err.value)


def test_strings_are_refused():
    with pytest.raises(ShardwiseInputError):
        model_from_param_count("70B")
