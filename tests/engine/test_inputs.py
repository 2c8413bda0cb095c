"""Reading what users type: token counts and parameter counts."""

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.inputs import global_batch_from_tokens, parse_count, parse_token_count


def test_token_suffixes_are_binary_as_in_training_recipes():
    # Llama 3 paper: 4M-token batches = 512 sequences × 8,192 tokens = 4,194,304 = 4·2^20.
    assert parse_token_count("4M") == 4 * 2**20
    assert parse_token_count("512k") == 512 * 1024
    assert global_batch_from_tokens("4M", 8192) == 512


def test_plain_token_numbers_are_taken_as_written():
    assert parse_token_count("4e6") == 4_000_000
    assert parse_token_count("4,194,304") == 4_194_304


def test_parameter_counts_are_decimal():
    assert parse_count("70B", "params") == 70e9
    assert parse_count("7.5b", "params") == 7.5e9


@pytest.mark.parametrize("bad", ["lots", "-4M", "0", "nan", ""])
def test_bad_counts_say_what_is_allowed(bad):
    with pytest.raises(ShardwiseInputError, match="number"):
        parse_token_count(bad)


def test_a_bad_token_count_is_refused_with_token_examples_and_as_typed():
    # It said "expects a number such as 70e9 or 70B, got '4x'": a parameter count's examples, and lower-cased.
    from shardwise.engine.errors import SettingsInputError

    with pytest.raises(SettingsInputError) as caught:
        parse_token_count("4X")
    assert str(caught.value) == ("global_batch_tokens expects a positive number of tokens such as 4M (4·2^20), 512k or "
                                 "4194304, got '4X'")


def test_qlora_with_fp8_is_refused_with_what_works():
    # QLoRA paper (Dettmers et al. 2023): NF4 storage, BF16 compute — no FP8 matmuls exist for it.
    import pydantic

    from shardwise.engine.training import TrainingSetup

    with pytest.raises(pydantic.ValidationError, match="bf16"):
        TrainingSetup(mode="qlora", precision="fp8")
    assert TrainingSetup(mode="lora", precision="fp8").precision == "fp8"


def test_more_gpus_per_node_than_gpus_is_an_error_not_clamped():
    from shardwise.engine.inputs import build_cluster

    with pytest.raises(ShardwiseInputError, match=r"gpus_per_node 8 is larger than the cluster \(gpus 4\)"):
        build_cluster("h100", 4, gpus_per_node=8)
    # Without --gpus-per-node a cluster smaller than the GPU's usual node is one partial node.
    assert build_cluster("h100", 4).gpus_per_node == 4
    assert build_cluster("h100", 16, gpus_per_node=16).gpus_per_node == 16


def test_moe_groups_must_be_consistent():
    import pydantic

    from shardwise.engine.model_spec import MoESpec

    with pytest.raises(pydantic.ValidationError, match="topk_group"):
        MoESpec(num_experts=256, top_k=8, expert_ffn_hidden_size=2048, n_group=4, topk_group=8)
    with pytest.raises(pydantic.ValidationError, match="n_group"):
        MoESpec(num_experts=100, top_k=8, expert_ffn_hidden_size=2048, n_group=8, topk_group=4)
