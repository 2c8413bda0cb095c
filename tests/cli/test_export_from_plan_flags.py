"""`export --from-plan FILE` with scenario flags: the flags given replace the file's values, the rest stay the
file's (docs/export.md: "Scenario flags on the command line win over the file"); a malformed file is one line.

Before: one setup flag (--seq-len) reset every other setup value to its default (a DeepSpeed FP8 plan exported
as Megatron BF16), and --gpus-per-node/--network without --gpu were ignored (a launch script for 8-GPU hosts
on 4-GPU ones); `{"plans": "x"}` was a traceback.
"""

import json

import pytest

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--seq-len", "8k", "--global-batch", "256"]


@pytest.fixture
def saved(tmp_path, capsys):
    code, out, err = run(capsys, "recommend", *SCENARIO, "--framework", "fsdp", "--precision", "fp8", "--top", "1",
                         "--json")
    assert code == 0, err
    path = tmp_path / "rec.json"
    path.write_text(out)
    return path


@pytest.fixture
def grpo_saved(tmp_path, capsys):
    """A GRPO recommendation (verl's defaults: prompt 512 + response 512) saved as recommend --json prints it."""
    code, out, err = run(capsys, "recommend", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--mode",
                         "grpo", "--top", "1", "--json")
    assert code == 0, err
    path = tmp_path / "grpo.json"
    path.write_text(out)
    return path


def test_one_setup_flag_keeps_the_files_other_values(saved, capsys):
    code, out, err = run(capsys, "export", "--format", "torchtitan", "--from-plan", saved, "--seq-len", "8k")
    assert code == 0, err
    # The file's FP8 and fsdp stay: torchtitan's float8 converter is written, and no "evaluated for megatron" note.
    assert "float8" in out and "evaluated for fsdp" in out and "evaluated for megatron" not in out + err


def test_a_setup_flag_given_replaces_the_files_value(saved, capsys):
    code, out, err = run(capsys, "export", "--format", "torchtitan", "--from-plan", saved, "--precision", "bf16")
    assert code == 0, err
    assert "float8" not in out and ", bf16," in out


def test_gpus_per_node_without_gpu_sets_the_hosts(saved, capsys):
    # 16 ranks on 4-GPU hosts: 16 / 4 = 4 hosts of 4 processes (was the file's 2 x 8).
    code, out, err = run(capsys, "export", "--format", "launch", "--from-plan", saved, "--gpus-per-node", "4")
    assert code == 0, err
    assert "NNODES=4\nNPROC_PER_NODE=4\n" in out


def test_gpus_without_gpu_is_checked_against_the_plan(saved, capsys):
    # The plan has DP=16 on 16 GPUs; on 32 its DP would be 32, so it is not this plan: refused, not ignored.
    code, out, err = run(capsys, "export", "--format", "launch", "--from-plan", saved, "--gpus", "32")
    assert code == 2 and out == "" and "DP=16" in err and "DP=32" in err


@pytest.mark.parametrize("content", ['{"plans": "x"}', '{"plans": 5}', '{"plans": [3]}',
                                     '{"setup": "x", "plans": [{"strategy": {"tp": 1}, "cluster": {"gpu": "h100", '
                                     '"num_gpus": 8}, "model": {"name": "llama-3.1-8b"}}]}',
                                     '{"setup": {"mode": "full"}, "plans": [{"strategy": {"tp": 1}, "cluster": '
                                     '{"gpu": "h100", "num_gpus": 8}, "model": {"name": "llama-3.1-8b"}}]}'])
def test_malformed_files_are_one_line_errors(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "export", "--format", "megatron", "--from-plan", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("shardwise: error:")


def test_grpo_response_length_given_moves_the_sequence(grpo_saved, capsys):
    # GRPO's sequence is prompt + response: a response length given beside the file must not clash with the
    # file's seq_len (512 + 512); the plan evaluated at 1,024 is then refused at 512 + 1,024 = 1,536.
    path = grpo_saved
    assert json.loads(path.read_text())["setup"]["seq_len"] == 1024
    code, out, err = run(capsys, "export", "--format", "deepspeed", "--from-plan", path, "--response-len", "1024")
    assert code == 2 and "1,536" in err


def test_gpu_without_gpus_takes_the_files_count(saved, capsys):
    # The same plan on H200s: 16 GPUs from the file (was "--gpus must be a positive whole number, got None").
    code, out, err = run(capsys, "export", "--format", "launch", "--from-plan", saved, "--gpu", "h200")
    assert code == 0, err
    assert "# cluster: 16 x h200" in out and "NNODES=2\nNPROC_PER_NODE=8\n" in out


def test_a_mode_given_drops_the_files_rollout_shape(grpo_saved, capsys):
    # A GRPO file exported as plain full training: its prompt/response/group/inference-TP belong to GRPO; they
    # were kept and refused as if the user had passed --prompt-len etc. with --mode full.
    path = grpo_saved
    code, out, err = run(capsys, "export", "--format", "deepspeed", "--from-plan", path, "--mode", "full")
    assert code == 0, err
    assert "setup:   full training" in err  # the JSON export's header goes to stderr
