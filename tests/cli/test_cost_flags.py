"""--train-tokens / --price-per-gpu-hour: honoured by recommend (they were accepted and ignored),
refused by subcommands that have no cost to report (explain, what-if, export)."""

import json

import pytest

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]



def test_recommend_fills_each_plans_cost(capsys):
    code, out, err = run(capsys, "recommend", *SCENARIO, "--top", 2, "--train-tokens", "1T",
                         "--price-per-gpu-hour", 3, "--json")
    assert code == 0, err
    for plan in json.loads(out)["plans"]:
        cost, tps = plan["cost"], plan["throughput"]["tokens_per_s"]
        assert cost["train_tokens"] == 1e12 and cost["price_per_gpu_hour"] == 3
        # time = tokens / (tokens/s); GPU-hours = hours x 8 GPUs; cost = GPU-hours x $3
        assert cost["time_to_train_s"] == pytest.approx(1e12 / tps)
        assert cost["total_cost"] == pytest.approx(1e12 / tps / 3600 * 8 * 3)


def test_recommend_text_shows_the_budget(capsys):
    code, out, err = run(capsys, "recommend", *SCENARIO, "--top", 1, "--train-tokens", "1T")
    assert code == 0, err
    assert "1T tokens:" in out and "GPU-hours" in out


@pytest.mark.parametrize("command", [["explain"], ["what-if", "--change", "gpu=h200"], ["export", "--format", "megatron"]])
def test_cost_flags_are_not_silently_ignored(capsys, command):
    code, out, err = run(capsys, command[0], *SCENARIO, *command[1:], "--train-tokens", "1T")
    assert code == 2 and "--train-tokens" in err


def test_what_if_help_states_its_own_default_top(capsys):
    code, out, _ = run(capsys, "what-if", "--help")
    assert code == 0 and "(default 3)" in out and "(default 5)" not in out  # what-if returns 3 plans


def test_evaluate_help_states_every_plan_default(capsys):
    # the plan flags had no help at all: a user could not tell that ZeRO-1 and selective recompute are the defaults
    code, out, _ = run(capsys, "evaluate", "--help")
    plan = out[out.index("plan (DP"):]
    for flag in ("--tp", "--pp", "--vpp", "--cp", "--ep", "--etp", "--zero", "--micro-batch", "--recompute"):
        assert flag in plan
    assert plan.count("(default") >= 9 and "default 1)" in plan and "default selective" in plan


@pytest.mark.parametrize("command", ["recommend", "evaluate"])
def test_a_budget_below_one_step_is_a_missing_unit(capsys, command):
    """`--train-tokens 15` (meant 15T) answered "15 tokens: 0.0 days, 0 GPU-hours, $0". One step of the default
    setup is 4,096 tokens x 1,024 sequences = 4,194,304 tokens; a budget below it is refused with the units."""
    code, out, err = run(capsys, command, *SCENARIO, "--train-tokens", "15")
    assert code == 2 and out == ""
    assert err == ("shardwise: error: --train-tokens '15' is 15 tokens, less than one optimizer step of this setup "
                   "(4,194,304 tokens): give the budget with its unit, e.g. 15T (15·10¹² tokens), 200B or 2e12\n")
    code, _, err = run(capsys, command, *SCENARIO, "--train-tokens", "4194304")  # exactly one step: a budget
    assert code == 0, err
