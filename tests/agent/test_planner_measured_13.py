"""The measured-run readings added in session 13, each in several phrasings of its class (the probe,
test_planner_probe_13.py, runs one of each end to end): a range read at its middle, a TFLOP/s per GPU, the user's
words after a pasted log on its line, the run's plan said in the sentence before its figure. Expected values are
the written figures' arithmetic."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract
from shardwise.agent.planner.measured import measured_run, without_log_lines
from shardwise.agent.planner.measured_plans import measured_plans
from shardwise.agent.state import ConversationState


@pytest.mark.parametrize("text, kind, middle, said", [
    ("we get between 3,800 and 4,100 tok/s/gpu", "tokens_per_s_per_gpu", (3800 + 4100) / 2, (3800, 4100)),
    ("we measured 3.8-4.1k tokens/s per GPU", "tokens_per_s_per_gpu", (3800 + 4100) / 2, (3800, 4100)),  # k on both
    ("our steps take 60 to 64 s", "step_s", (60 + 64) / 2, (60, 64)),
    ("step time 11,000-12,000 ms measured", "step_s", (11 + 12) / 2, (11, 12)),  # ms read in seconds
    ("wandb shows 38–41% mfu", "mfu", (38 + 41) / 2, (38, 41)),
    ("we measured 380-400 tflops/gpu", "tflops_per_gpu", (380 + 400) / 2, (380, 400)),
])
def test_a_measured_range_is_read_at_its_middle(text, kind, middle, said):
    run = measured_run(text)
    assert (run.kind, run.value) == (kind, pytest.approx(middle))
    assert run.said_range == pytest.approx(said)


@pytest.mark.parametrize("text, value", [
    ("we measured 850 tok/s/gpu on 2-4 nodes", 850),  # a range of something else: the figure as written
    ("we measured 3800 and 4100 tok/s/gpu", 4100),  # "and" without "between": not read as one range
])
def test_what_is_not_a_range_of_the_figure(text, value):
    run = measured_run(text)
    assert run.value == value and run.said_range is None


@pytest.mark.parametrize("text, tflops", [
    ("we're at tp8 and hitting ~410 TFLOPS per GPU", 410), ("wandb shows 412 TFLOP/s/GPU", 412),
    ("measured tflops per gpu of 395", 395), ("we get 395 model tflops per gpu", 395),
])
def test_a_measured_tflops_per_gpu(text, tflops):
    run = measured_run(text)
    assert (run.kind, run.value) == ("tflops_per_gpu", tflops)


@pytest.mark.parametrize("text", ["is 400 tflops per gpu good?", "the H100 does 989 tflops"])
def test_a_tflops_figure_with_no_measurement_or_not_per_gpu_is_none(text):
    assert measured_run(text) is None


DEEPSPEED = ("epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=15.21, CurrSamplesPerSec=15.35, "
             "MemAllocated=38.2GB, MaxMemAllocated=61.7GB")


@pytest.mark.parametrize("line, words", [
    (f"on 32 A100: '{DEEPSPEED}' — llama 2 13b zero3", "llama 2 13b zero3"),  # closed by its quote
    (f"on 32 A100: \"{DEEPSPEED}\" llama 2 13b zero3", "llama 2 13b zero3"),
    (f"on 32 A100: {DEEPSPEED} — llama 2 13b zero3", "llama 2 13b zero3"),  # a spaced dash after it
])
def test_words_after_a_log_on_its_line_are_the_users(line, words):
    kept = without_log_lines(line)
    assert words in kept and "RunningAvgSamplesPerSec" not in kept
    assert extract(line).model == "llama-2-13b"


@pytest.mark.parametrize("text, run, other", [
    ("llama 8b on 8 h100, tp1, 4k: our job does 60,000 tokens/s in total. calibrate and tell me what tp2 would give",
     {"tp": 1}, {"tp": 2}),
    ("llama 70b on 96 h100 (tp8 pp4 zero1): our steps take 62 s. would tp4 pp8 be faster?",
     {"tp": 8, "pp": 4, "zero": 1}, {"tp": 4, "pp": 8}),
])
def test_the_runs_plan_said_just_before_its_figure(text, run, other):
    from shardwise.agent.planner.entities import normalise

    found = measured_plans(normalise(text), measured_run(text), ConversationState())
    assert found.run == run and found.other == other


def test_a_question_before_the_figure_is_not_the_runs_plan():
    from shardwise.agent.planner.entities import normalise

    text = "would tp8 beat it? we measured 850 tok/s/gpu"
    assert measured_plans(normalise(text), measured_run(text), ConversationState()) is None
