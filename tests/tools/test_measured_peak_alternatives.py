"""A measured peak the plan as given does not explain carries, in the tool result, what recompute or the ZeRO
stage changed alone predicts (engine/peak_settings.py) — on estimate_memory and on calibrate_to_measurement from
a log. Expected: the engine's evaluate() of the changed plan, called here directly."""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.tools.dispatch import dispatch
from shardwise.tools.scenario import Plan, Scenario

# Llama 2 13B, ZeRO-3, micro-batch 4 x 4,096 tokens with selective recompute: the engine predicts ~146 GiB, beyond
# an 80 GB A100; with full recompute ~23 GiB. A run that ran reported a peak; the plan as given cannot be it.
SCENARIO = Scenario(model="llama-2-13b", gpu="a100-80gb", gpus=32, seq_len=4096, global_batch=128, framework="deepspeed")
PLAN = Plan(tp=1, pp=1, zero=3, micro_batch=4, recompute="selective")


def full_recompute_gib() -> float:
    s = SCENARIO.resolve()
    return evaluate(s.model, s.cluster, s.setup, PLAN.strategy().model_copy(update={"recompute": "full"})).memory.total_gib


def test_estimate_memory_names_the_setting_that_holds_the_peak():
    measured = round(full_recompute_gib(), 1)
    out = dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": PLAN.model_dump(),
                                       "measured_peak_gib": measured}, result_id="R1")
    assert out.ok
    p = out.result.measured_peak
    assert p.plan_fits is False and p.explained is False  # predicted beyond 80 GiB, and the peak is far below
    first = p.alternatives[0]
    assert (first.setting, first.value, first.holds_measured) == ("recompute", "full", True)
    assert first.predicted_gib == pytest.approx(full_recompute_gib(), abs=0.01)
    assert len(p.alternatives) <= 3


def test_a_peak_the_plan_explains_brings_no_alternatives():
    s = SCENARIO.resolve()
    plan = PLAN.model_copy(update={"recompute": "full"})
    e = evaluate(s.model, s.cluster, s.setup, plan.strategy()).memory
    out = dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": plan.model_dump(),
                                       "measured_peak_gib": round(e.total_gib, 1)}, result_id="R1")
    p = out.result.measured_peak
    assert p.explained and p.plan_fits and p.alternatives == []


def test_the_offline_answer_says_which_change_holds_the_peak(tmp_path):
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService

    measured = round(full_recompute_gib(), 1)
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream(f"llama 2 13b on 32 a100 80gb with deepspeed, zero3, micro batch 4, seq 4096, gbs 128. "
                               f"our measured peak is {measured} GiB - does that match?", None))[-1]
    assert "does not fit" in done.answer and "yet your run ran" in done.answer
    assert f"recompute=full **{measured:.1f} GiB**" in done.answer and f"holds your {measured:.1f} GiB" in done.answer


def test_calibrate_cli_lists_the_changes_before_the_profile(capsys):
    from support.cli_runner import run

    code, out, err = run(capsys, "calibrate", "--model", "llama-2-13b", "--gpu", "a100-80gb", "--gpus", 32,
                         "--seq-len", 4096, "--global-batch", 128, "--framework", "deepspeed", "--zero", 3,
                         "--micro-batch", 4, "--measured-tokens-per-s-per-gpu", 1900, "--measured-peak-gib", 61.7)
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "yet the run ran" in line)
    assert "--recompute full" in lines[at + 1] and "none holds 61.7 GiB" in out  # 23 GiB predicted, 61.7 measured
    assert at < next(i for i, line in enumerate(lines) if line.startswith("profile"))


def test_settings_a_log_printed_are_not_second_guessed(capsys):
    # tests/fixtures/logs/megatron_lm.log prints its arguments (recompute_granularity, use_distributed_optimizer) and a
    # 60 GB peak that the plan as given cannot reach: no change of either setting is offered, the log is what ran
    from pathlib import Path

    from support.cli_runner import run

    log = Path(__file__).parents[1] / "fixtures" / "logs" / "megatron_lm.log"
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", 64, "--from-log", log)
    assert code == 0, err
    assert "the log states recompute and the ZeRO stage" in out
    assert "--recompute full" not in out and "--zero 3" not in out


def test_a_peak_above_the_gpus_memory_brings_no_setting_to_blame():
    # 93.4 GiB on an 80 GB A100 is no plan's peak: the GPU or the figure is wrong, so no change is offered
    out = dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": PLAN.model_dump(),
                                       "measured_peak_gib": 93.4}, result_id="R1")
    p = out.result.measured_peak
    assert p.explained is False and p.alternatives == []
    # said so in the result: the A100 SXM4 80GB holds 80 GiB (81,920 MiB as nvidia-smi prints it; the catalog's
    # memory_gib), and 93.4 > 80
    assert p.above_capacity is True and p.capacity_gib == pytest.approx(80.0)


def test_a_peak_within_the_gpus_memory_is_not_above_capacity():
    out = dispatch("estimate_memory", {"scenario": SCENARIO.model_dump(), "plan": PLAN.model_dump(),
                                       "measured_peak_gib": 79.9}, result_id="R1")
    assert out.result.measured_peak.above_capacity is False  # 79.9 GiB fits in 80 GiB: compared, as any peak

