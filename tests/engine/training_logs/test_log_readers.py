"""Reading the four training-log formats. The excerpts in tests/fixtures/logs/ are written out
from each framework's own print statements (named below and in each reader's docstring); the
expected values are read off the excerpt by hand."""

from pathlib import Path

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.engine.training_logs import read_log

LOGS = Path(__file__).parents[2] / "fixtures" / "logs"


def text(name: str) -> str:
    return (LOGS / name).read_text()


def test_megatron_lm_iteration_lines_and_arguments():
    # NVIDIA/Megatron-LM megatron/training/training.py training_log(): ' elapsed time per
    # iteration (ms): {:.1f} |'; megatron/training/arguments.py _print_args(): '  {arg} {dots} {value}'.
    r = read_log(text("megatron_lm.log"))
    assert r.framework == "megatron-lm" and r.entries == 4
    # 4 entries: drop the first (warm-up), median of 77120.0, 77100.0, 79300.0 ms = 77.12 s
    assert r.step_s == pytest.approx(77.12)
    assert r.plan == {"tp": 4, "pp": 4, "cp": 1, "ep": 1, "etp": 1, "micro_batch": 1, "zero": 1,
                      "recompute": "selective", "no_sp": False}  # vpp None: not set
    assert (r.num_gpus, r.seq_len, r.global_batch, r.precision) == (64, 8192, 512, "bf16")
    assert r.peak_gib == pytest.approx(61440.0 / 1024)  # report_memory's 'max allocated' in MB


def test_torchtitan_metrics_lines_with_colour_codes():
    # pytorch/torchtitan torchtitan/components/metrics.py MetricsProcessor.log (0.2.2):
    # 'step: {step:2}  loss: …  memory: {:5.2f}GiB({:.2f}%)  tps: {round(tps):,}  tflops: …  mfu: …%',
    # ANSI colours around the fields; parallel_dims.py 'Building device mesh with parallelism: …'.
    r = read_log(text("torchtitan.log"))
    assert r.framework == "torchtitan" and r.entries == 4
    assert r.tokens_per_s_per_gpu == pytest.approx(6188)  # median of 6,152 / 6,210 / 6,188 (step 1 dropped)
    assert r.peak_gib == pytest.approx(47.96)
    assert r.num_gpus == 8 and r.plan["zero"] == 3 and r.plan["tp"] == 1 and "hsdp" not in r.plan
    assert r.setup_framework == "fsdp"


def test_deepspeed_throughput_timer():
    # deepspeedai/DeepSpeed deepspeed/utils/timer.py ThroughputTimer.stop: 'epoch={}/micro_step={}/
    # global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB'
    r = read_log(text("deepspeed.log"))
    assert r.framework == "deepspeed" and r.entries == 3
    assert r.samples_per_s == pytest.approx(54.25)  # the last running average
    assert r.peak_gib == pytest.approx(19.61)


def test_hf_trainer_final_metrics():
    # huggingface/transformers trainer_utils.speed_metrics('train', …) printed by ProgressCallback.on_log
    r = read_log(text("hf_trainer.log"))
    assert r.framework == "hf-trainer" and r.samples_per_s == pytest.approx(41.47)


def test_unreadable_log_names_what_was_looked_for():
    with pytest.raises(ShardwiseInputError) as exc:
        read_log(text("unreadable.log"), "run.log")
    msg = str(exc.value)
    assert "\n" not in msg and "run.log" in msg
    for wanted in ("elapsed time per iteration", "tps", "RunningAvgSamplesPerSec", "train_samples_per_second"):
        assert wanted in msg


def test_megatron_lines_behind_a_launcher_prefix_read_the_same():
    # torchrun --tee / Slurm --label put "[default0]:" before every line.
    plain, prefixed = read_log(text("megatron_lm.log")), read_log(text("megatron_lm_torchrun.log"))
    assert prefixed.plan == plain.plan and prefixed.step_s == plain.step_s and prefixed.num_gpus == 64


def test_older_torchtitan_mesh_and_wps():
    # torchtitan before the parallel_dims rewrite: logger.info(f"Building {len(dims)}-D device mesh with
    # {names}, {dims}") (only dimensions > 1), and the metrics line's per-device rate named "wps".
    r = read_log(text("torchtitan_2d_mesh.log"))
    assert r.framework == "torchtitan" and r.tokens_per_s_per_gpu == pytest.approx(4399)  # median of 4,410 and 4,388
    assert r.plan["tp"] == 2 and r.plan["zero"] == 3 and r.num_gpus == 8


def test_deepspeed_engine_configuration_block():
    # DeepSpeedConfig.print: '  {arg} {dots} {value}', dots = '.' * (29 - len(arg)) (none for the
    # 30-letter train_micro_batch_size_per_gpu).
    r = read_log(text("deepspeed.log"))
    assert r.plan == {"zero": 2, "micro_batch": 2} and r.global_batch == 64 and r.num_gpus == 16


@pytest.mark.parametrize("log", [
    " iteration       10/     100 | elapsed time per iteration (ms): .",  # Megatron line cut off mid-number
    "[timer.py:260:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=5.2e",  # DeepSpeed, cut in 5.2e+01
    "{'train_runtime': 1234.5678, 'train_samples_per_second': 4.1e",  # HF Trainer, cut in the exponent
    "step:  1  loss: 12.25250  memory: 42.10GiB(44.31%)  tps: 6,1",  # torchtitan, cut in '6,188'
    " iteration       10/     100 | elapsed time per iteration (ms): 0.0 | global batch size:   512 |",  # no step
])
def test_a_log_cut_off_mid_number_or_with_a_zero_time_is_unreadable_not_a_crash(log):
    # A truncated last line used to be a ValueError traceback (float('.')), or a ZeroDivisionError for a
    # 0.0 ms iteration; a partial number ('5.2e' of 5.2e+01) must not be read as a value 10x off.
    with pytest.raises(ShardwiseInputError, match="could not read a throughput"):
        read_log(log)


def test_a_cut_off_memory_field_or_zero_arguments_are_left_unread():
    # The throughput is whole, the memory field after it is cut ('max allocated: .'), and the printed
    # arguments say seq_length 0 / world_size 0 (no run has that size): read the step, leave the rest unset.
    log = ("------------------------ arguments ------------------------\n"
           "  seq_length ...................................... 0\n"
           "  world_size ...................................... 0\n"
           "-------------------- end of arguments ---------------------\n"
           " iteration       10/     100 | elapsed time per iteration (ms): 77000.0 | global batch size:     0 |\n"
           "[Rank 0] (after 10 iterations) memory (MB) | allocated: 30512.1 | max allocated: .")
    r = read_log(log)
    assert r.step_s == pytest.approx(77.0)  # 77000.0 ms
    assert (r.peak_gib, r.seq_len, r.num_gpus, r.global_batch) == (None, None, None, None)


def test_megatron_arguments_excerpt_without_the_block_header():
    # Users paste a few of _print_args' lines ('  {arg} {dots} {value}', dots = '.' * (48 - len(arg))) without
    # the '---- arguments ----' header; the values are read off the lines by hand.
    excerpt = ("  tensor_model_parallel_size ...................... 2\n"
               "  pipeline_model_parallel_size .................... 2\n"
               "  seq_length ...................................... 4096\n"
               " iteration      50/    1000 | elapsed time per iteration (ms): 9000.0 | global batch size:   128 |\n")
    r = read_log(excerpt)
    assert (r.plan["tp"], r.plan["pp"], r.seq_len, r.global_batch, r.step_s) == (2, 2, 4096, 128, 9.0)
