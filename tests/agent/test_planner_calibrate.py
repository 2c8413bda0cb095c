"""The offline planner offers to calibrate when the user says what their run measured; the numbers
it states come from the engine called directly here, and the profile passed to `ask --profile`
reaches every tool call. A question about a predicted number is not a measurement."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.measured import measured_mfu, measured_step_time, measured_throughput
from shardwise.agent.service import ChatService
from shardwise.engine.calibration.fit_profile import Measurement, fit_profile
from shardwise.engine.calibration.profile import CalibrationProfile
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

OPENING = "Llama-3.1-70B on 64 H100s, 8k context, 4M-token batches - what should I use?"


@pytest.mark.parametrize("text, value", [
    ("we measured 850 tok/s/GPU with TP4 PP4", 850.0),
    ("we're getting 1.1k tokens per second per GPU", 1100.0),
    ("our run does 1,234 tokens/s per GPU at tp=8", 1234.0),
    ("is 850 tok/s/GPU good for this?", None),  # no measurement cue: a question about a number
    ("we measured the loss at 2.1", None),  # no per-GPU throughput
])
def test_measured_throughput_needs_a_cue_and_a_per_gpu_unit(text, value):
    assert measured_throughput(text) == value


def ask_all(service, *messages):
    session, done = None, None
    for message in messages:
        events = list(service.stream(message, session))
        done = events[-1]
        session = done.session_id
    return done


def test_measured_run_is_answered_with_the_profile_it_implies(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 850 tok/s/GPU with TP4 PP4")
    call = done.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement" and call["arguments"]["measured_tokens_per_s_per_gpu"] == 850
    # The engine, directly: the same run fitted by fit_profile.
    run = Measurement(get_model("llama-3.1-70b"), build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512),
                      Strategy(tp=4, pp=4), 850.0)
    p = fit_profile([run], with_memory=False)
    assert f"{p.runs[0].predicted_before:,.0f}" in done.answer
    assert f"×{round(p.compute_scale, 3)}" in done.answer
    assert "shardwise calibrate" in done.answer and "--measured-tokens-per-s-per-gpu 850" in done.answer


def test_service_profile_reaches_the_tools(tmp_path):
    profile = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
    plain = ask_all(ChatService(AgentConfig(session_db=tmp_path / "a.db")), OPENING)
    calibrated = ask_all(ChatService(AgentConfig(session_db=tmp_path / "b.db"), profile=profile), OPENING)
    assert plain.plan["calibration"] is None
    assert calibrated.plan["calibration"].startswith("calibrated: compute ×0.800")
    assert "Calibrated: compute ×0.800" in calibrated.answer


@pytest.mark.parametrize("text, seconds", [
    ("our step time is 77.1 s with TP4 PP4", 77.1),  # "our step time" is a measuring cue of its own
    ("step time 77,120 ms measured with TP4 PP4", 77.12),  # milliseconds, as Megatron prints them: 77,120 / 1,000
    ("you said 60 s per step, why?", None),
])
def test_measured_step_time_reads_our_step_time_and_milliseconds(text, seconds):
    assert measured_step_time(text) == (pytest.approx(seconds) if seconds else None)


@pytest.mark.parametrize("text, fraction", [
    ("we measured 38.6% MFU with TP4 PP4", 0.386), ("our run does mfu 0.41 at tp=8", 0.41),
    ("is 38.6% MFU good?", None),  # a question about a number, no measurement
])
def test_measured_mfu_is_read_as_a_fraction(text, fraction):
    assert measured_mfu(text) == (pytest.approx(fraction) if fraction else None)


# Megatron-LM's training_log() line (megatron/training/training.py), as users paste it: the run's iteration
# time and global batch; "iteration 20/100" and "consumed samples" are the log's counters, not GPUs per node.
MEGATRON_LINE = (" [2025-08-01 07:34:50] iteration       20/     100 | consumed samples:        10240 | elapsed time "
                 "per iteration (ms): 77120.0 | throughput per GPU (TFLOP/s/GPU): 381.0 | learning rate: 1.395349E-07 "
                 "| global batch size:   512 | lm loss: 9.044022E+00 |")


def test_a_pasted_megatron_log_line_is_calibrated_to_not_refused(tmp_path):
    # It was answered "I can't help with that", and its "20/" set the session's GPUs per node to 20.
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we run TP4 PP4 ZeRO-1", MEGATRON_LINE)
    call = done.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement"
    args = call["arguments"]
    assert args["log"] is not None  # the line goes to the tool, which reads it with the engine's readers
    assert call["result"]["measured_step_s"] == pytest.approx(77.12)  # 77120.0 ms
    assert args["scenario"]["global_batch"] == 512 and args["scenario"]["gpus_per_node"] in (None, 8)
    assert (args["plan"]["tp"], args["plan"]["pp"]) == (4, 4)  # the plan they said they run
    # 512 x 8,192 tokens / 77.12 s / 64 GPUs = 849.8 tokens/s/GPU; the engine's fit of that run, directly:
    run = Measurement(get_model("llama-3.1-70b"), build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512),
                      Strategy(tp=4, pp=4, zero_stage=1), 512 * 8192 / 77.12 / 64)
    p = fit_profile([run], with_memory=False)
    assert "**850** tokens/s per GPU" in done.answer or "**850 tokens/s per GPU**" in done.answer
    assert f"**{p.runs[0].predicted_before:,.0f}**" in done.answer and f"×{round(p.compute_scale, 3)}" in done.answer


def test_a_measured_mfu_is_calibrated_and_one_above_100_percent_is_refused(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 38.6% MFU with TP4 PP4")
    call = done.tool_calls[-1]
    # MFU -> tokens/s per GPU as `calibrate --measured-mfu 0.386` converts it (the tool, through the same engine
    # function, engine/calibration/measured_value.py); the tool takes a fraction (engine/mfu_unit.py): 38.6 % = 0.386
    assert call["arguments"]["measured_mfu"] == pytest.approx(0.386)
    resolved_tokens = call["result"]["measured_tokens_per_s_per_gpu"]
    cli = Measurement(get_model("llama-3.1-70b"), build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512),
                      Strategy(tp=4, pp=4), resolved_tokens)
    from shardwise.engine.calibration.fit_profile import model_tflops_per_gpu
    assert model_tflops_per_gpu(cli) / 989 == pytest.approx(0.386, rel=2e-3)  # H100 SXM dense BF16 peak: 989 TFLOP/s (datasheet)
    assert "**MFU 38.6%**" in done.answer
    done = ask_all(service, OPENING, "we measured 150% MFU with TP4 PP4")
    assert "at most 100%" in done.answer and not any(c["name"] == "calibrate_to_measurement" for c in done.tool_calls)


def test_a_throughput_above_the_gpus_peak_is_reported_not_fitted(tmp_path):
    # 8,500 tokens/s/GPU of a 70B model is > 3.5x the H100's 100 % MFU (tests/cli/test_calibrate_cli.py has the arithmetic)
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 8500 tok/s/GPU with TP4 PP4")
    assert "more than the GPU can do" in done.answer and "×1.25" not in done.answer


def test_chat_gives_the_step_time_range_and_says_when_the_profile_holds_on_one_side_only(tmp_path):
    # The issue: every throughput and step time carries its 80 % interval in the CLI, page and chat; the CLI's
    # what-if notes a profile that applies before but not after (another GPU); the chat said neither.
    profile = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"), profile=profile)
    done = ask_all(service, OPENING)
    best = next(c for c in done.tool_calls if c["name"] == "recommend_plans")
    from shardwise.present import duration_ms
    low, high = best["result"]["best"]["step_ms_likely"]
    assert f"(likely {duration_ms(low)}–{duration_ms(high)})" in done.answer
    m_low, m_high = best["result"]["best"]["memory_gib_likely"]  # the peak's band, as the CLI and page give it
    assert f"(likely {m_low:,.1f}–{m_high:,.1f}) of" in done.answer
    session = done.session_id
    done = list(service.stream("what if we had H200s?", session))[-1]
    assert "applies differently before and after" in done.answer and "compute scale not applied" in done.answer
    done = list(service.stream("compare tp=4 pp=4 vs tp=8 pp=2", session))[-1]
    compared = next(c for c in done.tool_calls if c["name"] == "compare_plans")["result"]
    lo, hi = compared["a"]["tokens_per_s_per_gpu_likely"]
    assert f"({lo:,.0f}–{hi:,.0f})" in done.answer and "(both plans)" in done.answer


def test_a_whole_job_throughput_is_divided_by_the_gpus_and_an_unqualified_one_is_asked_about(tmp_path):
    # "54,400 tokens/s total" was ignored (the plan was evaluated as if nothing had been measured).
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 54,400 tokens/s total with TP4 PP4")
    call = done.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement"
    assert call["arguments"]["measured_tokens_per_s_per_gpu"] == pytest.approx(54_400 / 64)  # = 850 per GPU
    done = ask_all(service, OPENING, "we measured 54,400 tokens/s with TP4 PP4")
    assert "per GPU or for the whole job" in done.answer
    assert not any(c["name"] == "calibrate_to_measurement" for c in done.tool_calls)


@pytest.mark.parametrize("message", ["calibrate to 850 tok/s/GPU with TP4 PP4", "TP4 PP4 gives us 850 tok/s per GPU"])
def test_other_ways_of_giving_a_measurement_are_calibrated_to(tmp_path, message):
    # Both were answered as a plain evaluation, the 850 dropped without a word.
    done = ask_all(ChatService(AgentConfig(session_db=tmp_path / "s.db")), OPENING, message)
    call = done.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement" and call["arguments"]["measured_tokens_per_s_per_gpu"] == 850


def test_asking_to_calibrate_without_a_figure_says_what_to_give(tmp_path):
    # It was "I did not understand that question".
    done = ask_all(ChatService(AgentConfig(session_db=tmp_path / "s.db")), OPENING, "can you calibrate the model to our cluster?")
    assert "tell me what one run measured" in done.answer and "shardwise calibrate" in done.answer


def test_a_pasted_log_line_is_the_plan_they_measured_not_the_one_recommended(tmp_path):
    # After "we measured ... with TP4 PP4", a pasted line was calibrated against the recommended plan (TP2 CP2
    # ZeRO-3), a plan the user never said they ran; with no plan of theirs known, it asks.
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 850 tok/s/GPU with TP4 PP4", MEGATRON_LINE)
    plan = done.tool_calls[-1]["arguments"]["plan"]
    assert (plan["tp"], plan["pp"]) == (4, 4)
    done = ask_all(service, OPENING, MEGATRON_LINE)
    assert "Which plan did that run use?" in done.answer


def test_a_measured_zero_is_answered_and_a_signed_number_is_not_read_as_its_digits(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    # "0 tok/s/GPU" was dropped in silence (the plan evaluated as if nothing was said)
    done = ask_all(service, OPENING, "we measured 0 tok/s/GPU with TP4 PP4")
    assert "zero cannot be calibrated to" in done.answer and not done.tool_calls
    # "-5 tok/s/GPU" was calibrated to 5 tokens/s per GPU; "1e9" to 9
    assert measured_throughput("we measured -5 tok/s/GPU with TP4 PP4") is None
    assert measured_throughput("we measured 1e9 tok/s/GPU with TP4 PP4") is None
    assert measured_mfu("we measured mfu 1e9 with TP4 PP4") is None  # not its 1 (100 %)


def test_a_step_time_with_no_plan_words_is_a_measurement_not_out_of_scope(tmp_path):
    # "we measured 12 s per iteration" was "I can't help with that" even with a plan on the table. 12 s for
    # 4,194,304 tokens on 64 GPUs is 5,461 tokens/s/GPU, > 2,372 (100 % MFU, tests/cli/test_calibrate_cli.py).
    done = ask_all(ChatService(AgentConfig(session_db=tmp_path / "s.db")), OPENING, "we measured 12 s per iteration")
    assert done.tool_calls[-1]["name"] == "calibrate_to_measurement" and "more than the GPU can do" in done.answer


def test_an_unreadable_log_line_leaves_the_scenario_alone(tmp_path):
    # A 0.0 ms iteration is no step (unreadable), and its counter "10/100" set 10 GPUs per node.
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, " iteration       10/     100 | elapsed time per iteration (ms): 0.0 |",
                   "how much memory per GPU?")
    assert "10 GPUs per node" not in done.answer and "8 GPUs per node" in done.answer


def test_a_pasted_log_with_calibrate_if_not_is_calibrated_not_told_how(tmp_path):
    # "… calibrate if not" beside a DeepSpeed config print and timer line (the plan only in the log) was answered
    # with how to calibrate: the log was looked for in the normalised words, where 'RunningAvgSamplesPerSec' is
    # lower-cased and no reader knows it.
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, "qwen2.5 7b on 8 a100 80gb, deepspeed, seq 4096. engine config and timer:\n"
                            "  train_batch_size ............. 128\n  train_micro_batch_size_per_gpu  2\n"
                            "  world_size ................... 8\n  zero_optimization_stage ...... 2\n"
                            "epoch=0/micro_step=400/global_step=50, RunningAvgSamplesPerSec=9.0, CurrSamplesPerSec=9.1, "
                            "MemAllocated=20.0GB, MaxMemAllocated=55.0GB\ndoes that look right? calibrate if not")
    assert done.tool_calls[-1]["name"] == "calibrate_to_measurement"
    assert done.tool_calls[-1]["arguments"]["plan"]["zero"] == 2  # from the log's config print
    # DeepSpeed's samples/s are the whole job's: 9.0 samples/s x 4,096 tokens / 8 GPUs = 4,608 tokens/s per GPU
    assert "**4,608 tokens/s per GPU**" in done.answer


def test_an_mfu_below_one_percent_reaches_the_tool_as_a_fraction():
    # The tool takes measured_mfu as a fraction of the peak (engine/mfu_unit.py): "MFU 0.5%" must go as 0.005,
    # not 0.5 (which is 50 %); "MFU 37%" goes as 0.37.
    from shardwise.agent.planner.measured import measured_run

    low = measured_run("the dashboard shows 0.5% mfu").tool_arguments()["measured_mfu"]
    assert low == pytest.approx(0.005)
    assert measured_run("the dashboard shows 37% mfu").tool_arguments()["measured_mfu"] == pytest.approx(0.37)
