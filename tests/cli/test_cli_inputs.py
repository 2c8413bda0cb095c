"""Regression tests for CLI input parsing: flags that were broken or silently wrong."""

import json

import pytest

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]



def test_train_tokens_gives_time_to_train(capsys):
    # --train-tokens raised NameError (parse_count no longer imported) for every value.
    code, out, err = run(capsys, "evaluate", *SCENARIO, "--tp", 2, "--train-tokens", "15T",
                         "--price-per-gpu-hour", 2, "--json")
    assert code == 0, err
    d = json.loads(out)
    cost = d["cost"]
    assert cost["train_tokens"] == 15e12  # "T" = 10^12 tokens
    # Definitions: time = tokens / (tokens/s); GPU-hours = hours x GPUs; cost = GPU-hours x price.
    assert cost["time_to_train_s"] == pytest.approx(15e12 / d["throughput"]["tokens_per_s"])
    assert cost["gpu_hours"] == pytest.approx(cost["time_to_train_s"] / 3600 * 8)
    assert cost["total_cost"] == pytest.approx(cost["gpu_hours"] * 2)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan"])
def test_bad_train_tokens_is_one_line_exit_2(capsys, value):
    code, out, err = run(capsys, "evaluate", *SCENARIO, f"--train-tokens={value}")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--train-tokens" in err


@pytest.mark.parametrize("flag, value", [("--gpus", "8.5"), ("--tp", "2.5"), ("--micro-batch", "1.5"),
                                         ("--gpus-per-node", "7.9"), ("--seq-len", "1.0001k"),
                                         ("--seq-len", "4096.5"), ("--global-batch", "inf")])
def test_fractional_whole_numbers_are_refused_not_truncated(capsys, flag, value):
    # "--gpus 8.5" used to run as 8 GPUs without a word.
    argv = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", flag, value]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert flag in err and "whole number" in err


@pytest.mark.parametrize("flag, value, key, expected", [
    ("--gpus", "1e3", ("cluster", "num_gpus"), 1000),
    ("--seq-len", "1.5k", None, None),  # 1.5 x 1024 = 1536 tokens: whole, accepted
    ("--micro-batch", "2.0", ("strategy", "micro_batch"), 2),
])
def test_whole_numbers_in_other_spellings_are_accepted(capsys, flag, value, key, expected):
    argv = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", flag, value, "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    if key:
        assert json.loads(out)[key[0]][key[1]] == expected


@pytest.mark.parametrize("argv", [
    ["export", "--format", "megatron", *SCENARIO, "-o", "{tmp}/no/such/dir/x.sh"],
    ["export", "--format", "megatron", *SCENARIO, "-o", "{tmp}"],
    ["recommend", *SCENARIO, "--export-dir", "{tmp}/a_file"],
])
def test_unwritable_output_paths_are_one_line_exit_2(capsys, tmp_path, argv):
    # These raised FileNotFoundError / IsADirectoryError / FileExistsError tracebacks.
    (tmp_path / "a_file").write_text("x")
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and err.count("\n") == 1 and err.startswith("shardwise: error:")
    assert str(tmp_path) in err


@pytest.mark.parametrize("flag, value", [("--vpp", "300"), ("--seq-len", "1e9"), ("--micro-batch", "100000"),
                                         ("--global-batch", "2e9")])
def test_range_errors_name_the_flag_and_the_value(capsys, flag, value):
    # "vpp: Input should be ..." named a field; the user typed a flag.
    code, out, err = run(capsys, "evaluate", *SCENARIO, flag, value)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"shardwise: error: {flag}: ") and "(got " in err


def test_unknown_flag_points_at_the_subcommands_help(capsys):
    code, out, err = run(capsys, "explain", *SCENARIO, "--bogus", "1")
    assert code == 2 and err.count("\n") == 1
    assert "unrecognized arguments: --bogus 1" in err and "`shardwise explain --help`" in err


def test_qlora_with_fp8_is_one_clear_line(capsys):
    code, out, err = run(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--mode", "qlora", "--precision", "fp8")
    assert code == 2 and err.count("\n") == 1
    assert "QLoRA" in err and "bf16" in err and "Value error" not in err


def test_mean_doc_len_longer_than_the_sequence_is_one_clear_line(capsys):
    argv = ["evaluate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--seq-len", "4096",
            "--mean-doc-len", "9000"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1
    assert "mean document length 9,000 is longer than the sequence (4,096 tokens)" in err
    assert "valid --mean-doc-len: 1-4,096" in err  # the flag, not the API field mean_doc_len
    assert "Traceback" not in err


def test_mean_doc_len_is_in_the_setup(capsys):
    argv = ["--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--seq-len", "4096", "--mean-doc-len", "256"]
    code, out, err = run(capsys, "recommend", *argv, "--json")
    assert code == 0 and json.loads(out)["setup"]["mean_doc_len"] == 256
    code, out, err = run(capsys, "evaluate", *argv)
    assert code == 0 and "packed documents of ~256 tokens" in out


def test_nanotron_is_a_framework_one_can_plan_for(capsys):
    """nanotron offers ZeRO-0/1 only (ZeroDistributedOptimizer) and no interleaved schedule."""
    base = ["evaluate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "16", "--framework", "nanotron"]
    code, out, err = run(capsys, *base, "--zero", "1")
    assert code == 0 and "bf16, nanotron" in out
    code, out, err = run(capsys, *base, "--zero", "2")  # evaluate reports an invalid plan, exit 0
    assert code == 0 and "INVALID plan" in out and "ZeRO stage 2 is not available with nanotron" in out
    code, out, err = run(capsys, *base, "--pp", "2", "--vpp", "2", "--global-batch", "64")
    assert code == 0 and "nanotron has no interleaved pipeline schedule" in out


def test_a_thousands_comma_is_read_as_the_page_reads_it(capsys):
    """The page's form took "1,024" GPUs or sequences and the CLI refused it; groups of three digits are read alike
    now, and "1,6" (no thousands grouping) is still refused rather than read as 16."""
    from support.cli_runner import run

    code, out, err = run(capsys, "recommend", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16",
                         "--global-batch", "1,024", "--top", "1")
    assert code == 0, err
    assert "global batch 1,024 (4,194,304 tokens)" in out  # 1,024 sequences x 4,096 tokens
    code, out, err = run(capsys, "recommend", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "1,6")
    assert code == 2 and "expected a positive whole number, got '1,6'" in err


def test_a_lora_rank_with_full_training_is_said_ignored_once(capsys):
    # Full training has no adapters, so --lora-rank sized nothing, silently; now one warning line, exit 0.
    base = ["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--tp", "1"]
    code, out, err = run(capsys, *base, "--lora-rank", "32")
    assert code == 0 and err.count("\n") == 1
    assert err.startswith("shardwise: warning: --lora-rank 32 is ignored: --mode full trains every weight")
    code, out, err = run(capsys, *base, "--lora-rank", "32", "--mode", "lora")
    assert code == 0 and "warning: --lora-rank" not in err and "lora (rank 32)" in out
    code, out, err = run(capsys, *base)
    assert code == 0 and "--lora-rank" not in err
