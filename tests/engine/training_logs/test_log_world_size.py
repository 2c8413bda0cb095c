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
