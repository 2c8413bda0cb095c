"""Megatron-LM with a batch-size ramp-up, DeepSpeed's pipeline engine, and the HF Trainer's unknown backend.
The excerpts in tests/fixtures/logs/ are written from the frameworks' print statements at the commits named in
their headers (Megatron-LM d98e8a64, DeepSpeed edaa7221); the expected values are read off them by hand."""

from pathlib import Path

import pytest

from shardwise.engine.training_logs import read_log

LOGS = Path(__file__).parents[2] / "fixtures" / "logs"


def text(name: str) -> str:
    return (LOGS / name).read_text()


def test_megatron_rampup_reads_only_the_iterations_at_the_final_global_batch():
    # training_log prints the current global batch (micro_batch_size x data_parallel_size x get_num_microbatches());
    # the excerpt ramps 128 -> 256 -> 384 -> 512 (--rampup-batch-size 128 128 12800) and then logs 4 lines at 512:
    # 7412.3, 7398.8, 7405.1, 7420.6 ms; median = (7405.1 + 7412.3) / 2 = 7408.7 ms (none dropped: the ramp-up
    # already carried the warm-up). Over all 10 lines the median would mix in the smaller batches' ~1.9-5.6 s steps.
    r = read_log(text("megatron_lm_rampup.log"))
    assert r.entries == 4 and r.global_batch == 512
    assert r.step_s == pytest.approx(7.4087)
    assert r.notes == ("batch ramp-up: read the 4 iterations at the final global batch 512 and set aside 6 at 128, "
                       "256, 384",)
    assert "batch ramp-up" in r.said()


def test_a_log_that_ends_inside_the_rampup_reads_its_last_batch_and_says_so():
    # Cut after iteration 60: the last printed batch is 384 (one line, 5566.1 ms), short of the configured 512.
    lines = text("megatron_lm_rampup.log").splitlines()
    cut = "\n".join(line for line in lines if "iteration       70/" not in line and "iteration       80/" not in line
                    and "iteration       90/" not in line and "iteration      100/" not in line)
    r = read_log(cut)
    assert (r.global_batch, r.entries, r.step_s) == (384, 1, pytest.approx(5.5661))
    assert "the log ends before the ramp-up reaches the configured 512" in r.notes[0]


def test_a_constant_batch_log_has_no_rampup_note():
    assert read_log(text("megatron_lm.log")).notes == ()


def test_deepspeed_pipeline_engine_step_lines():
    # deepspeed/runtime/pipe/engine.py: 'steps: {} loss: {:0.4f} iter time (s): {:0.3f} samples/sec: {:0.3f}';
    # 4 lines, the first (warm-up) dropped: median of 2.048 / 2.052 / 2.045 s = 2.048 s and of
    # 62.500 / 62.378 / 62.592 samples/s = 62.500 (= train_batch_size 128 / 2.048 s).
    r = read_log(text("deepspeed_pipeline.log"))
    assert r.framework == "deepspeed" and r.setup_framework == "deepspeed" and r.entries == 4
    assert r.step_s == pytest.approx(2.048) and r.samples_per_s == pytest.approx(62.5)
    assert r.global_batch == 128
    # STAGE=0..3 in the 'RANK={} STAGE={} LAYERS=' lines: 4 stages; the config's ZeRO stage and micro-batch
    assert r.plan == {"zero": 1, "micro_batch": 1, "pp": 4}
    # DeepSpeedConfig's world_size is the data-parallel size under a pipeline grid (8 here, of 32 GPUs): not a GPU count
    assert r.num_gpus is None


def test_pipeline_lines_without_the_config_block_give_samples_only():
    # Without train_batch_size the step time cannot be turned into tokens (which batch?): samples/s is the figure.
    r = read_log("steps: 10 loss: 7.8812 iter time (s): 2.514 samples/sec: 50.915\n"
                 "steps: 20 loss: 6.9120 iter time (s): 2.048 samples/sec: 62.500\n")
    assert r.step_s is None and r.samples_per_s == pytest.approx((50.915 + 62.5) / 2)  # 2 lines: none dropped


def test_hf_trainer_log_defaults_to_the_pytorch_native_stack():
    # The Trainer's speed metrics say nothing of the backend (DDP/FSDP, or DeepSpeed when configured): the
    # reader does not claim one (setup_framework), it offers PyTorch-native as the default to say.
    r = read_log(text("hf_trainer.log"))
    assert r.setup_framework is None and r.default_framework == "fsdp"
