"""Logs pasted into the chat read as `calibrate --from-log` reads them: a HF Trainer log (which cannot say its
backend) is modelled on the PyTorch-native stack and the answer says it was assumed, unless the user names the
framework; a DeepSpeed pipeline-engine log and a Megatron-LM batch ramp-up are read from their own lines. Expected
tokens/s per GPU: hand arithmetic from the fixture lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


def _ask(tmp_path, message: str):
    done = list(ChatService(AgentConfig(session_db=tmp_path / "s.db")).stream(message, None))[-1]
    return done, next(c for c in done.tool_calls if c["name"] == "calibrate_to_measurement")


def test_a_pasted_hf_trainer_log_assumes_pytorch_native_and_says_so(tmp_path):
    done, call = _ask(tmp_path, "llama 3.1 8b on 64 h100s, seq 4096, tp1 pp1 zero1 mb1. our trainer log:\n"
                      + (LOGS / "hf_trainer.log").read_text())
    assert call["result"]["scenario"]["framework"] == "fsdp"
    assert "framework fsdp assumed" in done.answer
    # 41.47 samples/s x 4,096 tokens / 64 GPUs = 2,654.1 tokens/s per GPU
    assert call["result"]["measured_tokens_per_s_per_gpu"] == pytest.approx(2654.1, abs=0.1)


def test_a_framework_the_user_names_is_used_and_nothing_is_assumed(tmp_path):
    done, call = _ask(tmp_path, "llama 3.1 8b on 64 h100s, seq 4096, tp1 pp1 zero1 mb1, we use deepspeed. trainer log:\n"
                      + (LOGS / "hf_trainer.log").read_text())
    assert call["result"]["scenario"]["framework"] == "deepspeed" and "assumed" not in done.answer


def test_a_pasted_deepspeed_pipeline_log_is_calibrated_on(tmp_path):
    log = "\n".join(line for line in (LOGS / "deepspeed_pipeline.log").read_text().splitlines() if not line.startswith("#"))
    done, call = _ask(tmp_path, "llama 2 7b on 32 h100s, seq 4096, tp1. our log:\n" + log)
    # 128 sequences x 4,096 tokens / (2.048 s x 32 GPUs) = 8,000 tokens/s per GPU, PP4 from the stage lines
    assert call["result"]["measured_tokens_per_s_per_gpu"] == pytest.approx(8000.0)
    assert call["result"]["plan_label"].startswith("TP=1 PP=4")


def test_a_pasted_rampup_log_says_which_iterations_it_read(tmp_path):
    # what fits a chat message (4,000 characters): a few argument lines, the iterations from 30 on
    wanted = ("global_batch_size", "micro_batch_size", "seq_length", "tensor_model_parallel_size", "world_size",
              "iteration       30/", "iteration       40/", "iteration       50/", "iteration       60/",
              "iteration       70/", "iteration       80/", "iteration       90/", "iteration      100/")
    log = "\n".join(line for line in (LOGS / "megatron_lm_rampup.log").read_text().splitlines()
                    if any(w in line for w in wanted) and not line.startswith("#"))
    done, call = _ask(tmp_path, "llama 3.1 8b on 32 h100s. our megatron log:\n" + log)
    assert "batch ramp-up: read the 4 iterations at the final global batch 512 and set aside 4" in done.answer
    # 512 x 4,096 / (7.4087 s x 32) = 2,097,152 / 237.078 = 8,845.82 tokens/s per GPU
    assert call["result"]["measured_tokens_per_s_per_gpu"] == pytest.approx(8845.82, abs=0.1)


def test_a_pipeline_line_with_a_zero_iter_time_is_called_unusable(tmp_path):
    done = list(ChatService(AgentConfig(session_db=tmp_path / "s.db")).stream(
        "llama 2 7b on 32 h100s, tp1 pp4. our log:\nsteps: 10 loss: 7.8812 iter time (s): 0.000 samples/sec: 0.000",
        None))[-1]
    assert done.tool_calls == [] and "printed as zero" in done.answer


@pytest.mark.parametrize("log", [
    # HF Trainer's per-step logs (ProgressCallback prints each logs dict): loss, no train_samples_per_second yet
    "{'loss': 2.1432, 'grad_norm': 1.734, 'learning_rate': 1.8e-05, 'epoch': 0.5}\n"
    "{'loss': 1.9011, 'grad_norm': 1.102, 'learning_rate': 6e-06, 'epoch': 1.0}",
    # a Megatron-LM training_log line without its 'elapsed time per iteration (ms)' field
    " [2026-03-14 06:00:19.079190] iteration       10/  100000 | consumed samples:         1280 | "
    "learning rate: 1.000000E-07 | global batch size:   128 | lm loss: 1.013700E+01 |",
])
def test_a_pasted_log_with_no_throughput_line_is_called_unusable_not_out_of_scope(tmp_path, log):
    done = list(ChatService(AgentConfig(session_db=tmp_path / "s.db")).stream(
        "llama 3.1 8b on 8 h100s, tp1 zero3 mb2. calibrate to our log:\n" + log, None))[-1]
    assert done.tool_calls == [] and "found no usable step time or throughput" in done.answer
