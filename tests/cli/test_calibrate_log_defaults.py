"""`calibrate --from-log` on a Megatron-LM batch ramp-up, a DeepSpeed pipeline-engine log, and a HF Trainer log
(whose backend the log cannot say): what is read, what is assumed, and the measured figure, by hand."""

import json
from pathlib import Path

import pytest

from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


def test_megatron_rampup_is_measured_at_the_final_batch_and_says_so(capsys):
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "32",
                         "--from-log", LOGS / "megatron_lm_rampup.log")
    assert code == 0, err
    assert "batch ramp-up: read the 4 iterations at the final global batch 512" in out
    # 512 sequences x 4,096 tokens / (7.4087 s x 32 GPUs) = 8,845.82 tokens/s per GPU
    assert "measured   8,846 tokens/s/GPU" in out


def test_deepspeed_pipeline_log_is_read_as_deepspeed_throughput(capsys):
    code, out, err = run(capsys, "calibrate", "--model", "llama-2-7b", "--gpu", "h100", "--gpus", "32",
                         "--seq-len", "4096", "--from-log", LOGS / "deepspeed_pipeline.log")
    assert code == 0, err
    # 128 sequences x 4,096 tokens / (2.048 s x 32 GPUs) = 8,000 tokens/s per GPU; the stages give PP=4
    assert "measured   8,000 tokens/s/GPU" in out and "--pp 4" in out and " PP=4 " in out
    assert "compute ×" in out and "deepspeed" in out.split("profile")[1].splitlines()[0]


def test_hf_trainer_log_assumes_the_pytorch_native_stack_and_names_it(capsys):
    base = ["calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "64", "--seq-len", "4096",
            "--from-log", LOGS / "hf_trainer.log"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    assert "framework  fsdp assumed" in out and "--framework deepspeed" in out
    assert "framework=megatron" not in out
    code, out, err = run(capsys, *base, "--json")
    assert json.loads(out)["framework"] == "fsdp"
    code, out, err = run(capsys, *base, "--framework", "deepspeed", "--json")  # said: used, nothing assumed
    assert code == 0, err
    assert json.loads(out)["framework"] == "deepspeed"
    code, out, err = run(capsys, *base, "--framework", "deepspeed")
    assert code == 0, err
    assert "assumed" not in out


@pytest.mark.parametrize("log", ["megatron_lm.log", "torchtitan.log", "deepspeed.log"])
def test_logs_that_name_their_framework_assume_nothing(capsys, log):
    gpus = {"torchtitan.log": "8", "megatron_lm.log": "64", "deepspeed.log": "16"}[log]
    model = "llama-3.1-70b" if log == "megatron_lm.log" else "llama-3.1-8b"
    code, out, err = run(capsys, "calibrate", "--model", model, "--gpu", "h100", "--gpus", gpus, "--seq-len", "4096"
                         if log == "deepspeed.log" else "8192", "--from-log", LOGS / log)
    assert code == 0, err
    assert "read from" in out and "assumed" not in out
