"""`shardwise what-if` and token-count batches: ambiguous or empty changes are one-line errors."""

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.inputs import global_batch_from_tokens
from shardwise.engine.whatif import parse_changes
from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]



@pytest.mark.parametrize("change", ["gpu=h200,gpu=b200", "gpus=8,num_gpus=16", "seq=8k,seq_len=16k",
                                    "global_batch=512,global_batch_tokens=4M"])
def test_an_input_changed_twice_is_refused(change):
    # "gpu=h200,gpu=b200" used to answer for b200 only.
    with pytest.raises(ShardwiseInputError):
        parse_changes(change)


@pytest.mark.parametrize("changes", [["gpu=h100"], ["gpu=h100-sxm"], ["gpus=8"], ["seq_len=4096"], ["mode=full"],
                                     ["gpu=h200", "gpu=b200"], ["global_batch_tokens=10"]])
def test_bad_what_if_is_one_line_exit_2(capsys, changes):
    # A change to the current value printed an empty "change" line and an empty "why:".
    argv = ["what-if", *SCENARIO]
    for c in changes:
        argv += ["--change", c]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("shardwise: error:")


@pytest.mark.parametrize("tokens, seq_len, sequences", [("4M", 8192, 512),       # 4·2^20 / 8192 (Llama 3)
                                                       ("3k", 4096, 1),         # 3072 / 4096 = 0.75 -> 1
                                                       (6144, 4096, 2)])        # 1.5 rounds to even: 2
def test_token_budget_rounds_to_whole_sequences(tokens, seq_len, sequences):
    assert global_batch_from_tokens(tokens, seq_len) == sequences


@pytest.mark.parametrize("tokens", ["100", "2000"])  # < half of one 4,096-token sequence
def test_token_budget_below_one_sequence_is_refused(capsys, tokens):
    # Used to run silently with a global batch of one sequence.
    code, out, err = run(capsys, "evaluate", *SCENARIO, "--global-batch-tokens", tokens)
    assert code == 2 and out == "" and err.count("\n") == 1 and "less than one sequence" in err


DEEPSEEK = ["--model", "deepseek-v3", "--gpu", "h800", "--gpus", "2048", "--seq-len", "4096", "--global-batch",
            "15360", "--precision", "fp8"]


def test_what_if_changes_the_moe_dispatcher(capsys):
    """The dispatcher is a setup input like the framework: named in the change, bad values refused
    with what is allowed, carried in the JSON setup."""
    import json

    code, out, err = run(capsys, "what-if", *DEEPSEEK, "--change", "moe_dispatcher=deepep")
    assert code == 0, err
    assert "moe_dispatcher: alltoall → deepep" in out
    code, out, err = run(capsys, "what-if", *DEEPSEEK, "--change", "moe_dispatcher=nccl")
    assert code == 2 and "'alltoall', 'allgather' or 'deepep'" in err
    code, out, err = run(capsys, "recommend", *DEEPSEEK, "--moe-dispatcher", "deepep", "--json", "--top", "1")
    assert code == 0, err
    assert json.loads(out)["setup"]["moe_dispatcher"] == "deepep"


def test_the_change_line_names_the_input_as_change_spells_it(capsys):
    """`--change gpus=16` printed "num_gpus: 8 → 16", the engine's field, a name the CLI never asks for."""
    code, out, err = run(capsys, "what-if", *SCENARIO, "--change", "gpus=16")
    assert code == 0, err
    assert out.splitlines()[0] == "change   gpus: 8 → 16"
