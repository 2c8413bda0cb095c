"""`calibrate --from-log` says what it read with units and as the flags that set it, not as the reader's record
("step_s=77.12, peak_gib=60, …, no_sp=False"). Expected values are read off the fixture log's own lines
(tests/fixtures/logs/megatron_lm.log, Megatron-LM's format)."""

from pathlib import Path

from support.cli_runner import run

LOG = Path(__file__).parents[1] / "fixtures" / "logs" / "megatron_lm.log"


def test_the_log_line_reads_as_figures_and_flags(capsys):
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--from-log", str(LOG))
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("read from"))
    # The log's iterations 20-40 print 77120.0, 77100.0, 79300.0 ms; the first (91234.5, warm-up) is dropped and the
    # median of the rest is 77.12 s. "max allocated: 61440.0" MB (MiB, Megatron's unit) = 60.0 GiB.
    assert line.startswith("read from megatron-lm log (4 entries): step 77.12 s, peak memory 60.0 GiB; run as ")
    # The arguments block: world_size 64, seq_length 8192, global_batch_size 512, bf16, TP 4, PP 4,
    # use_distributed_optimizer True (ZeRO-1), recompute_granularity selective, sequence_parallel True (no --no-sp).
    for flag in ("--gpus 64", "--seq-len 8192", "--global-batch 512", "--precision bf16", "--tp 4", "--pp 4",
                 "--micro-batch 1", "--zero 1", "--recompute selective"):
        assert flag in line
    assert "=" not in line and "--no-sp" not in line
    # The run is named as every other CLI line names plans; DP = 64 / (TP 4 x PP 4) = 4.
    assert "global batch 512, TP=4 PP=4 DP=4 ZeRO-1 mb=1 recompute=selective SP" in out


def test_one_entry_is_singular(capsys, tmp_path):
    """A Hugging Face Trainer log has one summary line: "(1 entry)", not "(1 entries)". 2.845 samples/s x 4,096
    tokens / 8 GPUs = 1,456.6 tokens/s per GPU."""
    log = tmp_path / "hf.log"
    log.write_text("{'train_runtime': 3600.12, 'train_samples_per_second': 2.845, 'train_steps_per_second': 0.022, "
                   "'train_loss': 1.65, 'epoch': 1.0}\n")
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--gpus", "8",
                         "--seq-len", "4096", "--global-batch", "128", "--from-log", str(log))
    assert code == 0, err
    assert out.startswith("read from hf-trainer log (1 entry): 2.845 samples/s")
    assert "measured   1,457 tokens/s/GPU" in out
