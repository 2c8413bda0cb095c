"""`shardwise evaluate` human output: the setup is shown, and the verdict does not mislead."""

from shardwise.cli.main import main

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]


def text(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def test_setup_line_shows_what_was_evaluated(capsys):
    # 4M tokens = 4·2^20 = 4,194,304 tokens = 512 sequences of 8,192: the rounding is visible.
    out = text(capsys, "evaluate", *SCENARIO, "--seq-len", "8k", "--global-batch-tokens", "4M", "--mode", "lora",
               "--lora-rank", 64)
    assert "setup    seq 8,192, global batch 512 (4,194,304 tokens), lora (rank 64), bf16, megatron" in out


def test_invalid_plan_verdict_says_so(capsys):
    # 32 heads are not divisible by 3; on 24 GPUs TP=3 leaves a whole DP (24 / 3 = 8), so the plan is priced
    out = text(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "24", "--tp", 3)
    total = next(line for line in out.splitlines() if "total (peak)" in line)
    assert "plan is invalid" in total


def test_time_table_uses_readable_units(capsys):
    out = text(capsys, "evaluate", *SCENARIO, "--tp", 2)
    step = next(line for line in out.splitlines() if line.strip().startswith("step "))
    assert step.rstrip().endswith((" s", " ms"))


def test_train_tokens_are_written_with_a_unit(capsys):
    out = text(capsys, "evaluate", *SCENARIO, "--tp", 2, "--train-tokens", "15T")
    assert "15T tokens:" in out and "e+13" not in out


def test_fits_inside_the_headroom_recommend_keeps_is_flagged(capsys):
    import json

    assert main([*["evaluate", *SCENARIO, "--tp", "2"], "--json"]) == 0
    peak = json.loads(capsys.readouterr().out)["memory"]["total_gib"]
    # A GPU whose capacity puts the peak at 95 %: it fits, but recommend (10 % headroom) would drop it.
    gpu = json.dumps({"name": "tight", "memory_gib": peak / 0.95, "bf16_tflops": 989, "hbm_bandwidth_gbs": 3350,
                      "intra_node": "nvlink4", "gpus_per_node": 8})
    out = text(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", gpu, "--gpus", 8, "--tp", 2)
    total = next(line for line in out.splitlines() if "total (peak)" in line)
    assert "fits (above the 10% headroom" in total


def test_plan_line_writes_the_plan_as_every_cli_line_does(capsys):
    # 8 GPUs, TP=2: DP = 8 / 2 = 4; the default global batch 1,024 / (DP 4 x micro-batch 1) = 256 accumulation steps.
    # ZeRO is written "ZeRO-1" and SP by name, as `recommend` and `explain` write plans (engine/plan_label.py "cli").
    out = text(capsys, "evaluate", *SCENARIO, "--tp", 2)
    plan = next(line for line in out.splitlines() if line.startswith("plan "))
    assert plan == "plan     TP=2 PP=1 VPP=1 CP=1 EP=1 ETP=1 DP=4 ZeRO-1 mb=1 recompute=selective SP, grad-accum 256"
    recommend = text(capsys, "recommend", *SCENARIO)
    assert "ZeRO=" not in out and "ZeRO=" not in recommend
