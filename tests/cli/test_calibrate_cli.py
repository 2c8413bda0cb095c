"""`shardwise calibrate` and `--profile`: a measured run in, a profile file out, used by the
other commands; bad logs and bad profiles get one-line errors with exit status 2."""

import json
from pathlib import Path

import pytest

from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8k", "--global-batch", "512"]
PLAN = ["--tp", "4", "--pp", "4"]


def test_calibrate_saves_a_profile_that_reproduces_the_measurement(capsys, tmp_path):
    path = tmp_path / "p.json"
    code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, "--measured-tokens-per-s-per-gpu", 850, "--save", path)
    assert code == 0, err
    assert "before" in out and "after" in out and "saved" in out
    assert "without the profile" in out and "with the profile" in out  # what it changes for the recommendation
    saved = json.loads(path.read_text())
    assert saved["runs"][0]["predicted_after"] == pytest.approx(850, rel=1e-3)
    code, out, err = run(capsys, "evaluate", *SCENARIO, *PLAN, "--profile", path, "--json")
    assert code == 0, err
    t = json.loads(out)["throughput"]
    assert t["tokens_per_s_per_gpu"] == pytest.approx(850, rel=1e-3)
    lo, hi = t["tokens_per_s_per_gpu_range"]
    assert lo < 850 < hi


def test_step_time_and_mfu_are_the_same_measurement(capsys):
    # 850 tokens/s/GPU on 64 GPUs with 512 x 8192 tokens per step: step = 4,194,304 / (850 x 64) = 77.10 s
    step = 512 * 8192 / (850 * 64)
    outs = []
    for flag, value in (("--measured-tokens-per-s-per-gpu", 850), ("--measured-step-s", step)):
        code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, flag, value, "--json")
        assert code == 0, err
        outs.append(json.loads(out)["compute_scale"])
    assert outs[0] == pytest.approx(outs[1], rel=1e-6)


@pytest.mark.parametrize("log, extra", [("megatron_lm.log", []), ("torchtitan.log", []),
                                        ("deepspeed.log", ["--seq-len", "4096"]),
                                        ("hf_trainer.log", ["--seq-len", "4096"])])
def test_calibrate_from_each_log_format(capsys, log, extra):
    gpus = {"torchtitan.log": "8", "megatron_lm.log": "64", "deepspeed.log": "16"}.get(log, "64")  # as the logs say
    # The DeepSpeed and HF Trainer excerpts' rates are an 8B model's: 54.25 samples/s x 4,096 / 16 GPUs =
    # 13,888 tokens/s/GPU is > 6x the H100's peak for a 70B model (see the MFU test below).
    model = "llama-3.1-70b" if log == "megatron_lm.log" else "llama-3.1-8b"
    code, out, err = run(capsys, "calibrate", "--model", model, "--gpu", "h100", "--gpus", gpus,
                         "--from-log", LOGS / log, *extra)
    assert code == 0, err
    assert "read from" in out and "profile" in out


def test_unreadable_log_is_a_one_line_error(capsys):
    code, out, err = run(capsys, "calibrate", *SCENARIO, "--from-log", LOGS / "unreadable.log")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "RunningAvgSamplesPerSec" in err and "Traceback" not in err


def test_missing_measurement_is_refused(capsys):
    code, out, err = run(capsys, "calibrate", *SCENARIO)
    assert code == 2 and "--measured-tokens-per-s-per-gpu" in err


@pytest.mark.parametrize("content", ["not json", '{"gpu": "h100-sxm"}',
                                     '{"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron", '
                                     '"compute_scale": 40}'])
@pytest.mark.parametrize("command", [["evaluate"], ["recommend"], ["explain"], ["what-if", "--change", "gpu=h200"],
                                     ["export", "--format", "megatron"]])
def test_bad_profile_is_a_one_line_error_everywhere(capsys, tmp_path, content, command):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, command[0], *SCENARIO, *command[1:], "--profile", path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "profile" in err


def test_measured_csv_fits_several_runs(capsys, tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("model,gpu,gpus,seq_len,global_batch,tp,pp,measured_tokens_per_s_per_gpu\n"
                   "llama-3.1-8b,h100,8,8192,64,2,1,7000\n"
                   "llama-3.1-8b,h100,16,8192,64,2,1,6800\n")
    code, out, err = run(capsys, "calibrate", *SCENARIO, "--measured-csv", csv)
    assert code == 0, err
    assert out.count("measured ") == 2


def test_text_outputs_name_the_profile_and_what_if_warns_when_it_applies_to_one_side(capsys, tmp_path):
    path = tmp_path / "p.json"
    code, _, err = run(capsys, "calibrate", *SCENARIO, *PLAN, "--measured-tokens-per-s-per-gpu", 850, "--save", path)
    assert code == 0, err
    code, out, err = run(capsys, "recommend", *SCENARIO, "--top", 1, "--profile", path)
    assert code == 0 and "calibrated: compute ×" in out and "likely " in out
    code, out, err = run(capsys, "what-if", *SCENARIO, "--change", "gpu=h200", "--profile", path)
    assert code == 0, err
    assert "compute scale not applied" in out and "applies differently before and after" in out
    code, out, err = run(capsys, "what-if", *SCENARIO, "--change", "seq_len=4k", "--profile", path)
    assert code == 0 and "applies differently" not in out  # same GPU: the profile holds on both sides


def test_log_gpu_count_disagreeing_with_gpus_is_refused(capsys):
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "64",
                         "--from-log", LOGS / "deepspeed.log", "--seq-len", "4096")
    assert code == 2 and "16 GPUs" in err and "--gpus is 64" in err


@pytest.mark.parametrize("rows, needle", [
    ("model,gpu,gpus,tp,measured_tokens_per_s_per_gpu\nllama-3.1-8b,h100,x,2,7000\n", "line 2: argument --gpus"),
    ("model,gpu,gpus,tp,bogus\nllama-3.1-8b,h100,8,2,7000\n", "line 2: unrecognized arguments: --bogus"),
    ("model,gpu,gpus,tp\nllama-3.1-8b,h100,8,2\n", "line 2: calibrate needs exactly one"),
    ("model,gpu,gpus\n", "has no rows"),
])
def test_bad_csv_rows_are_one_line_errors_naming_the_line(capsys, tmp_path, rows, needle):
    csv = tmp_path / "runs.csv"
    csv.write_text(rows)
    code, out, err = run(capsys, "calibrate", *SCENARIO, "--measured-csv", csv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_an_invalid_measured_plan_is_refused_with_the_rule(capsys):
    code, out, err = run(capsys, "calibrate", *SCENARIO, "--tp", "3", "--measured-step-s", "60")
    assert code == 2 and "tp_cp_pp_divides_gpus" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("measured", [
    # 10x the docs' 850 tokens/s/GPU. Upper limit by hand: Llama-3.1-70B has 70.55e9 parameters, of which
    # 128,256 x 8,192 = 1.05e9 are the input embedding (no matmul), so >= 6 x 69.5e9 = 4.17e11 model FLOPs
    # per token before attention; the H100 SXM's dense BF16 peak is 989 TFLOP/s (datasheet), so 100 % MFU
    # is at most 989e12 / 4.17e11 = 2,372 tokens/s/GPU.
    ["--measured-tokens-per-s-per-gpu", "8500"],
    # 7 s per step: 512 x 8,192 tokens / 7 s / 64 GPUs = 9,362 tokens/s/GPU > 2,372
    ["--measured-step-s", "7"],
    # 150 % MFU, stated directly (a fraction of the peak, engine/mfu_unit.py)
    ["--measured-mfu", "1.5"],
])
def test_a_measurement_above_the_gpus_peak_is_refused_not_fitted(capsys, tmp_path, measured):
    # It used to fit compute x1.25 (the bound), warn, exit 0 and save the profile.
    path = tmp_path / "p.json"
    code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, *measured, "--save", path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "MFU" in err, err
    assert not path.exists()


def test_a_log_whose_step_time_is_impossibly_short_is_refused(capsys, tmp_path):
    # 1 ms per step of 512 x 8,192 tokens on 64 GPUs = 65.5 million tokens/s/GPU: far above 2,372 (above).
    log = tmp_path / "fast.log"
    log.write_text((LOGS / "megatron_lm.log").read_text().replace("elapsed time per iteration (ms): 77", "elapsed time "
                                                                  "per iteration (ms): 0.001 | was 77"))
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64",
                         "--from-log", log)
    assert code == 2 and "more than the GPU can do" in err


@pytest.mark.parametrize("log, gpus, flags, needle", [
    # torchtitan prints its device mesh (tp=1) and runs FSDP2: a Megatron TP8 description is another run
    ("torchtitan.log", "8", ["--framework", "megatron"], "framework=fsdp but --framework megatron"),
    ("torchtitan.log", "8", ["--tp", "8"], "tp=1 but --tp 8"),
    # DeepSpeed's engine block says zero_optimization_stage 2
    ("deepspeed.log", "16", ["--seq-len", "2048", "--zero", "3"], "zero=2 but --zero 3"),
    # Megatron's arguments say seq_length 8192 and sequence_parallel True
    ("megatron_lm.log", "64", ["--seq-len", "4096"], "seq_len=8192 but --seq-len 4096"),
    ("megatron_lm.log", "64", ["--no-sp"], "--no-sp"),
    # the log is the measurement: a second one beside it would be dropped
    ("megatron_lm.log", "64", ["--measured-tokens-per-s-per-gpu", "800"], "--measured-tokens-per-s-per-gpu would be ignored"),
])
def test_flags_contradicting_the_log_are_refused_not_overridden(capsys, log, gpus, flags, needle):
    # They used to be replaced by the log's values without a word (only --gpus was checked).
    model = "llama-3.1-70b" if log == "megatron_lm.log" else "llama-3.1-8b"
    code, out, err = run(capsys, "calibrate", "--model", model, "--gpu", "h100", "--gpus", gpus, "--from-log",
                         LOGS / log, *flags)
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_flags_agreeing_with_the_log_and_defaults_the_log_left_are_said(capsys):
    code, out, err = run(capsys, "calibrate", *SCENARIO, "--tp", "4", "--from-log", LOGS / "megatron_lm.log", "--json")
    assert code == 0, err
    agreeing = json.loads(out)["compute_scale"]
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64",
                         "--from-log", LOGS / "megatron_lm.log", "--json")
    assert json.loads(out)["compute_scale"] == agreeing
    # torchtitan's metrics and mesh lines carry no sequence length or batch: the run is predicted at the
    # defaults (seq 4,096, 1,024 sequences), which the output must name
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--from-log", LOGS / "torchtitan.log")
    assert code == 0, err
    assert "not in log  seq_len=4096, global_batch=1024" in out


@pytest.mark.parametrize("other", [["--from-log", LOGS / "megatron_lm.log"], ["--measured-step-s", "77"]])
def test_csv_beside_another_measurement_is_refused(capsys, tmp_path, other):
    # The CSV's runs were fitted and the other measurement dropped without a word.
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text("model,gpu,gpus,seq_len,global_batch,tp,pp,measured_tokens_per_s_per_gpu\n"
                        "llama-3.1-70b,h100,64,8192,512,4,4,850\n")
    code, out, err = run(capsys, "calibrate", *SCENARIO, *other, "--measured-csv", csv_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "would be ignored" in err, err


def test_csv_alone_needs_no_scenario_flags_and_a_single_run_still_does(capsys, tmp_path):
    # --gpu/--gpus were required by the parser and then ignored beside --measured-csv (each row names its own).
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text("model,gpu,gpus,seq_len,global_batch,tp,pp,measured_tokens_per_s_per_gpu\n"
                        "llama-3.1-70b,h100,64,8192,512,4,4,850\n")
    code, out, err = run(capsys, "calibrate", "--measured-csv", csv_path)
    assert code == 0, err
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--measured-tokens-per-s-per-gpu", "850")
    assert code == 2 and "needs --gpu and --gpus" in err


def test_a_single_node_run_does_not_claim_to_change_the_network(capsys):
    # 8 GPUs = one HGX node: no cross-node traffic, so the profile has no network scale; the "changes" line said it had.
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8k",
                         "--global-batch", "64", "--tp", "2", "--measured-tokens-per-s-per-gpu", "7000")
    assert code == 0, err
    assert "network unchanged" in out and "across nodes (network)" not in out


def test_post_training_calibrates_the_scenario_evaluate_predicts(capsys):
    # calibrate set an unsaid --seq-len to 4,096, but for grpo the sequence is prompt + response (512 + 512 = 1,024,
    # verl's defaults, `--seq-len` help): the measured step was turned into tokens/s for another scenario.
    flags = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--mode", "grpo"]
    code, out, err = run(capsys, "evaluate", *flags, "--json")
    ev = json.loads(out)
    assert ev["setup"]["seq_len"] == 512 + 512
    code, out, err = run(capsys, "calibrate", *flags, "--measured-step-s", ev["time"]["step_s"], "--json")
    assert code == 0, err
    r = json.loads(out)["runs"][0]
    assert r["seq_len"] == 1024
    # the step evaluate predicts, given as measured, is the throughput evaluate predicts: nothing to correct
    assert r["measured_tokens_per_s_per_gpu"] == pytest.approx(ev["throughput"]["tokens_per_s_per_gpu"], rel=1e-6)
    assert r["predicted_before"] == pytest.approx(r["measured_tokens_per_s_per_gpu"], rel=1e-6)


def test_a_peak_memory_above_the_gpus_capacity_is_refused(capsys):
    # An H100 SXM has 80 GiB (datasheet; the catalog's capacity): a 120 GiB peak came from another GPU.
    code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, "--measured-tokens-per-s-per-gpu", "850",
                         "--measured-peak-gib", "120")
    assert code == 2 and "120.0 GiB is more than the h100-sxm's 80 GiB" in err


def test_a_profile_that_applies_nowhere_does_not_say_calibrated(capsys, tmp_path):
    # An H100 / ib-ndr profile on 8 A100s in one node changes nothing; it read "calibrated: compute scale not applied …".
    path = tmp_path / "p.json"
    code, _, err = run(capsys, "calibrate", *SCENARIO, *PLAN, "--measured-tokens-per-s-per-gpu", 850, "--save", path)
    assert code == 0, err
    code, out, err = run(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--gpus", "8",
                         "--profile", path, "--json")
    assert json.loads(out)["calibration"].startswith("profile not applied: compute scale not applied")


# 1e12 tokens/s/GPU x ~6 x 70e9 FLOPs/token is ~4e23 FLOP/s, against the H100's 989e12 dense bf16 peak: refused.
# A 100 GiB peak on an 80 GiB H100: refused. The engine names the settings; the CLI names the flags that set them.
@pytest.mark.parametrize("extra, flags", [
    (["--measured-tokens-per-s-per-gpu", "1e12"], "(--gpus, --seq-len, --global-batch)"),
    (["--measured-tokens-per-s-per-gpu", "850", "--measured-peak-gib", "100"], "is --gpu set to the GPU the run used?"),
])
def test_a_refused_run_names_the_flags_describing_it(capsys, extra, flags):
    code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, *extra)
    assert code == 2 and flags in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("value, meant", [("1.5", "for 1.5 % give 0.015"), ("45", "for 45 % give 0.45")])
def test_measured_mfu_is_a_fraction_and_above_1_is_refused_naming_the_fraction(capsys, tmp_path, value, meant):
    # --measured-mfu 1.5 was read as 1.5 % (a value above 1 was a percent): the unit is now a fraction of the dense
    # peak (its help says so, engine/mfu_unit.py) and 1.5 would be 150 %, more than the peak: one line, exit 2
    path = tmp_path / "p.json"
    code, out, err = run(capsys, "calibrate", *SCENARIO, *PLAN, "--measured-mfu", value, "--save", path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and not path.exists()
    assert f"--measured-mfu {value} is above 1: the MFU is a fraction" in err and meant in err


def test_measured_mfu_help_states_the_unit(capsys):
    code, out, err = run(capsys, "calibrate", "--help")
    assert code == 0 and "MFU as a fraction of the GPU's dense peak: 0.45 for 45 %" in " ".join(out.split())


def test_flags_beside_a_csv_fill_the_columns_a_row_leaves_out(capsys, tmp_path):
    """`--seq-len 8k --pp 2` beside rows without those columns were ignored: the runs were fitted at 4,096 tokens and
    PP=1 without a word. A row's own column still wins (this one gives tp 4)."""
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text("model,gpu,gpus,tp,measured_tokens_per_s_per_gpu\nllama-3.1-70b,h100,64,4,1000\n")
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64",
                         "--seq-len", "8k", "--global-batch-tokens", "4M", "--pp", "2", "--tp", "8",
                         "--measured-csv", csv_path)
    assert code == 0, err
    # 4M tokens = 4,194,304 / 8,192 = 512 sequences; DP = 64 / (TP 4 x PP 2) = 8
    assert "run        Llama-3.1-70B, 64 GPUs, seq 8,192, global batch 512, TP=4 PP=2 DP=8 " in out
    assert "a column a row leaves out comes from " in out and "--seq-len 8192" in out
    # a row giving global_batch drops the command line's --global-batch-tokens (one setting, two spellings)
    csv_path.write_text("model,gpu,gpus,global_batch,measured_tokens_per_s_per_gpu\nllama-3.1-70b,h100,64,256,1000\n")
    code, out, err = run(capsys, "calibrate", "--seq-len", "8k", "--global-batch-tokens", "4M", "--measured-csv", csv_path)
    assert code == 0, err
    assert "seq 8,192, global batch 256," in out
