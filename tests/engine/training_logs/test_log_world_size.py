"""The GPU count when the log does not print it as `world_size`: Megatron-LM's validate_args summary line, and
DeepSpeed's config `world_size`, which is the data-parallel size under a model-parallel grid. Fixtures name the
framework commits their line formats come from; the expected values are read off them by hand."""

from pathlib import Path

from shardwise.engine.training_logs import read_log

LOGS = Path(__file__).parents[2] / "fixtures" / "logs"


def text(name: str) -> str:
    return (LOGS / name).read_text()


def test_megatron_gpu_count_from_the_using_world_size_line():
    # 'using world size: 32, data-parallel size: 4, ..., tensor-model-parallel size: 4, pipeline-model-parallel
    # size: 2' (arguments.py validate_args); no world_size / tensor_model_parallel_size argument lines in the log.
    r = read_log(text("megatron_lm_world_size_line.log"))
    assert r.num_gpus == 32
    assert (r.plan["tp"], r.plan["pp"], r.plan["cp"]) == (4, 2, 1)
    # 32 = 4 (data-parallel) x 4 (tensor) x 2 (pipeline) x 1 (context): the line is self-consistent
    assert r.seq_len == 4096 and r.global_batch == 256


def test_the_older_summary_line_and_an_encoder_size_are_read_right():
    # Older releases: 'context-parallel size: {} ' without a comma; some print 'encoder-tensor-model-parallel
    # size' beside the decoder's (some releases' arguments.py): the decoder's 2 and 4 are read, not the encoder's 1.
    log = ("using world size: 16, data-parallel size: 2, context-parallel size: 1 tensor-model-parallel size: 2, "
           "encoder-tensor-model-parallel size: 1, pipeline-model-parallel size: 4, encoder-pipeline-model-parallel "
           "size: 1\n iteration       10/     100 | elapsed time per iteration (ms): 5000.0 | global batch size:    64 |\n")
    r = read_log(log)
    assert r.num_gpus == 16 and (r.plan["tp"], r.plan["pp"], r.plan["cp"]) == (2, 4, 1)


def test_a_log_with_both_the_argument_and_the_summary_line_gives_one_count():
    # megatron_lm.log prints both (world_size 64 in the arguments; the summary line says 64 too): one count.
    assert read_log(text("megatron_lm.log")).num_gpus == 64


def without(lines_with: str, name: str) -> str:
    return "\n".join(line for line in text(name).splitlines() if lines_with not in line)


def test_deepspeed_under_a_tensor_parallel_grid_takes_megatrons_world_size_not_deepspeeds():
    # DeepSpeed's config prints world_size 8 = mpu.get_data_parallel_world_size() (config.py); Megatron-DeepSpeed's
    # summary line says 'using world size: 32, data-parallel-size: 8, …, tensor-model-parallel size: 4': 32 GPUs.
    r = read_log(text("deepspeed_megatron_tp.log"))
    assert r.framework == "deepspeed" and r.num_gpus == 32 and r.notes == ()
    assert r.samples_per_s == 41.350  # the last running average
    # TP 4 and PP 1 from Megatron's arguments; ZeRO 1 and micro-batch 4 from DeepSpeed's config; batch 256
    assert r.plan == {"tp": 4, "pp": 1, "zero": 1, "micro_batch": 4} and r.global_batch == 256


def test_deepspeed_with_a_grid_and_no_total_refuses_to_guess_and_says_so():
    # The same log without the summary line: tensor_model_parallel_size 4 shows the grid, so world_size 8 is the
    # data-parallel size and 8 x 4 = 32 is not guessed (a sequence-parallel degree would also divide it out).
    r = read_log(without("using world size", "deepspeed_megatron_tp.log"))
    assert r.num_gpus is None
    assert [str(n) for n in r.notes] == [
        "DeepSpeed's world_size 8 is the data-parallel size under a model-parallel grid (tensor_model_parallel_size "
        "4), not the GPU count, which the log does not print: the run's GPU count is the one given (gpus)"]
    assert "the one given (--gpus)" in r.said(lambda name: "--" + name)  # the CLI's spelling (cli/flags.py)


def test_megatrons_world_size_argument_is_told_from_deepspeeds_by_its_padding():
    # Megatron pads '{arg} {dots}' to 48 characters (world_size + 38 dots), DeepSpeed to 29 (world_size + 19 dots).
    log = without("using world size", "deepspeed_megatron_tp.log").replace(
        "  seq_length", "  world_size " + "." * 38 + " 32\n  seq_length")
    assert read_log(log).num_gpus == 32


def test_deepspeed_without_a_grid_still_reads_world_size_as_the_gpu_count():
    # deepspeed.log: no mpu (no Megatron arguments, no pipeline): world_size = dist.get_world_size() = 16.
    assert read_log(text("deepspeed.log")).num_gpus == 16


def test_the_pipeline_engine_follows_the_same_rule():
    # deepspeed_pipeline.log: STAGE=0..3 lines and the 'steps: … iter time (s)' lines are the pipeline engine,
    # world_size 8 its data-parallel size; no Megatron total in the log: no GPU count, and the note says why.
    r = read_log(text("deepspeed_pipeline.log"))
    assert r.num_gpus is None and "world_size 8 is the data-parallel size" in str(r.notes[0])
    assert "(the pipeline engine)" in str(r.notes[0])


def test_a_megatron_excerpt_holding_deepspeeds_config_print_does_not_take_its_world_size():
    # A Megatron-DeepSpeed excerpt without the arguments header: DeepSpeed's world_size 8 (19 dots) is the
    # data-parallel size; the summary line's 32 is the GPU count.
    log = ("using world size: 32, data-parallel-size: 8, sequence-parallel size: 1, tensor-model-parallel size: 4, "
           "pipeline-model-parallel size: 1 \n"
           "[INFO] [config.py:1012:print]   world_size ................... 8\n"
           " iteration       10/     100 | elapsed time per iteration (ms): 6000.0 | global batch size:   256 |\n")
    assert read_log(log).num_gpus == 32
    # ... and without the summary line, no count rather than the data-parallel 8
    assert read_log(log.split("\n", 1)[1]).num_gpus is None
