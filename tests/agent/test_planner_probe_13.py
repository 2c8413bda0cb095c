"""Twenty issue-14 chat messages written as users type them (session 13's own probe, not eval cases): calibrating
from a measured tok/s/GPU, step time, MFU, TFLOP/s or peak memory; pasted Megatron-LM, torchtitan, DeepSpeed and
HF Trainer lines; "how sure are you"; ranges; follow-ups using the profile; what-ifs after calibrating; impossible
measurements; counts in words. Eight failed before this session's fixes (0, 5, 7, 14, 15, 17, 18, 19).

Expected values are hand arithmetic written out here (tokens per step / step time / GPUs; samples/s x sequence /
GPUs; TFLOP/s / model FLOPs per token, engine/flops.py) or the engine called directly (fit_profile, recommend,
engine/cost.py's formulas), never the planner's answer copied in."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService

from support.chat import turns, calls
from shardwise.engine.calibration.fit_profile import Measurement, fit_profile
from shardwise.engine.flops import model_flops_per_token
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

SEVENTY = "llama 3.1 70b, 64 h100, 8k, 4M tok batch, tp8 pp2 zero1: we measured 850 tok/s/gpu"


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def per_gpu(tokens_per_step: float, step_s: float, gpus: int) -> str:
    return f"{tokens_per_step / step_s / gpus:,.0f} tokens/s per GPU"


def seventy_run_fit():
    # 4M tokens = 4 x 2^20 / 8,192 = 512 sequences a step
    run = Measurement(get_model("llama-3.1-70b"), build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512),
                      Strategy(tp=8, pp=2, zero_stage=1), 850.0)
    return fit_profile([run], with_memory=False)


# 0. a measured TFLOP/s per GPU is the MFU it is of the GPU's dense peak
def test_00_tflops_per_gpu(service):
    [done] = turns(service, "llama 3.1 70b on 8 nodes of 8xH100, 8k ctx, gbs 512. we're at tp8 pp2 zero1 mb1 and "
                            "hitting ~410 TFLOPS per GPU, can you calibrate to that?")
    assert calls(done) == ["calibrate_to_measurement"]
    # tokens/s per GPU = achieved FLOP/s / model FLOPs per token (the peak cancels: MFU x peak = 410 TFLOP/s)
    flops = model_flops_per_token(get_model("llama-3.1-70b"), 8192, TrainingSetup(seq_len=8192, global_batch=512))
    assert f"**{410e12 / flops:,.0f} tokens/s per GPU**" in done.answer
    assert "410 TFLOP/s per GPU" in done.answer and "989 dense bf16" in done.answer  # H100 SXM datasheet: 989 TFLOP/s


# 1. an impossible step time: 256 x 4,096 tokens / 1.9 s / 16 GPUs
def test_01_impossible_step_time(service):
    [done] = turns(service, "mistral 7b, 16 h100s, tp1 pp1 zero2, micro batch 2, 4k seq, gbs 256 — measured step "
                            "time 1.9s. calibrate pls")
    assert f"{256 * 4096 / 1.9 / 16:,.0f} tokens/s per GPU" in done.answer and "impossible" in done.answer


# 2. an MFU as a fraction
def test_02_mfu_fraction(service):
    [done] = turns(service, "our MFU is 0.41 on llama 8b with 32 H100, TP2 PP1, 8k context, gbs 512. how does that "
                            "compare to your prediction and can you calibrate")
    flops = model_flops_per_token(get_model("llama-3.1-8b"), 8192, TrainingSetup(seq_len=8192, global_batch=512))
    assert calls(done) == ["calibrate_to_measurement"]
    assert f"**{0.41 * 989e12 / flops:,.0f} tokens/s per GPU**" in done.answer


# 3. a measured peak memory is set against the prediction
def test_03_measured_peak(service):
    [done] = turns(service, "qwen2.5-14b on 2 nodes 8x a100 80gb, tp4 pp2, seq 4096, gbs 128. peak mem per gpu was "
                            "71.3 GiB according to torch.cuda.max_memory_allocated — does that match?")
    [call] = done.tool_calls
    assert call["name"] == "estimate_memory" and call["arguments"]["measured_peak_gib"] == 71.3
    assert call["arguments"]["scenario"]["gpus"] == 2 * 8 and "71.3 GiB" in done.answer


# 4. a Megatron-LM training_log() line: 64 sequences x 4,096 tokens / 2.4513 s / 16 GPUs
def test_04_megatron_line(service):
    [done] = turns(service, "here's our megatron log, llama 3.1 8b on 16 H100 tp2 pp1, seq 4096:\n [2025-03-01 10:11:12] "
                            "iteration      100/   10000 | consumed samples:         6400 | elapsed time per iteration (ms): "
                            "2451.3 | throughput per GPU (TFLOP/s/GPU): 412.7 | learning rate: 3.000000E-04 | global batch "
                            "size:    64 | lm loss: 2.345678E+00 |\ncalibrate to it")
    assert calls(done) == ["calibrate_to_measurement"] and per_gpu(64 * 4096, 2.4513, 16) in done.answer


# 5. a torchtitan line and another cluster size asked: calibrated on 8 GPUs, the what-if to 64 with that profile
def test_05_torchtitan_then_64_gpus(service):
    [done] = turns(service, "torchtitan llama3 8b, 8 h100, fsdp, seq 8192, local batch 1:\n[rank0]:[titan] 2025-01-15 "
                            "12:00:00,000 - root - INFO - step: 50  loss:  5.1234  memory: 62.11GiB(78.50%)  tps: 6,812  "
                            "tflops: 394.52  mfu: 39.89%\nwhat should we expect on 64 GPUs?")
    assert calls(done) == ["calibrate_to_measurement", "what_if"]
    calibrated, what_if = done.tool_calls
    assert what_if["arguments"]["change"]["gpus"] == 64 and what_if["arguments"]["scenario"]["gpus"] == 8
    assert "**6,812 tokens/s per GPU**" in done.answer  # torchtitan's tps is per GPU
    scale = calibrated["result"]["profile"]["compute_scale"]
    assert f"Calibrated: compute ×{scale:.3f}" in done.answer  # the what-if ran with the profile just fitted


# 6. HF Trainer's summary: 5.6 samples/s x 2,048 tokens / 4 GPUs
def test_06_hf_trainer_summary(service):
    [done] = turns(service, "HF trainer, mistral 7b lora r16 on 4 A100 80GB, seq 2048, per_device_train_batch_size=4, "
                            "grad accum 8: {'train_runtime': 3600.1, 'train_samples_per_second': 5.6, "
                            "'train_steps_per_second': 0.044, 'train_loss': 1.23, 'epoch': 1.0} — calibrate?")
    assert calls(done) == ["calibrate_to_measurement"] and f"**{5.6 * 2048 / 4:,.0f} tokens/s per GPU**" in done.answer


# 7. a range is fitted at its middle, and said so
def test_07_range_is_fitted_at_its_middle(service):
    [done] = turns(service, "we get between 3,800 and 4,100 tok/s/gpu on llama 8b, 8 h100, tp1 zero1, 8k ctx, gbs 256. "
                            "calibrate on that")
    [call] = done.tool_calls
    assert call["arguments"]["measured_tokens_per_s_per_gpu"] == (3800 + 4100) / 2
    assert "middle of the range you gave (3,800–4,100 tokens/s per GPU)" in done.answer


# 8. "how sure are you" after a measurement: the plan's 80 % intervals
def test_08_how_sure_after_a_measurement(service):
    _, done = turns(service, SEVENTY, "how sure are you about that?")
    [call] = done.tool_calls
    assert call["name"] == "evaluate_plan" and (call["arguments"]["plan"]["tp"], call["arguments"]["plan"]["pp"]) == (8, 2)
    low, high = call["result"]["evaluation"]["throughput"]["tokens_per_s_per_gpu_range"]
    assert f"likely **{low:,.0f}–{high:,.0f}**" in done.answer and "80 % intervals" in done.answer


# 9. the profile accepted, then a what-if: predicted with it
def test_09_what_if_after_accepting_the_profile(service):
    *_, done = turns(service, SEVENTY, "yes use it", "now what if we move to 128 GPUs?")
    [call] = done.tool_calls
    assert call["name"] == "what_if" and call["arguments"]["change"]["gpus"] == 128
    assert f"Calibrated: compute ×{seventy_run_fit().compute_scale:.3f}" in done.answer


# 10. "with our profile" on a follow-up after accepting it
def test_10_profile_on_a_follow_up(service):
    *_, done = turns(service, SEVENTY, "yes", "with our profile, what's the best plan for 32k context?")
    [call] = done.tool_calls
    assert call["name"] == "recommend_plans" and call["arguments"]["scenario"]["seq_len"] == 32 * 1024
    assert "With your calibration profile" in done.answer and f"×{seventy_run_fit().compute_scale:.3f}" in done.answer


# 11.-13. impossible measurements: answered as such
def test_11_impossible_throughput(service):
    [done] = turns(service, "we measured 95,000 tok/s/gpu on llama 3.1 70b with 64 h100 tp8 pp2, 8k seq. calibrate")
    assert "impossible" in done.answer and "95,000 tokens/s per GPU" in done.answer


def test_12_zero_step_time(service):
    [done] = turns(service, "step time is 0 ms on our llama 8b run on 8 h100, tp1. calibrate")
    assert done.tool_calls == [] and "zero" in done.answer


def test_13_mfu_above_100(service):
    [done] = turns(service, "we measured MFU of 130% on mistral 7b, 8 h100s tp1. calibrate please")
    assert done.tool_calls == [] and "130.0%" in done.answer and "impossible" in done.answer


# 14. a count in words beside a measurement
def test_14_sixteen_h100s(service):
    [done] = turns(service, "sixteen H100s running llama 3.1 8b at tp2, 4k ctx, gbs 256 and we see 9.1k tok/s per gpu. "
                            "calibrate")
    [call] = done.tool_calls
    assert call["arguments"]["scenario"]["gpus"] == 16 and call["arguments"]["measured_tokens_per_s_per_gpu"] == 9100


# 15. a DeepSpeed throughput line in quotes, the model named after it: 15.21 samples/s x 4,096 / 32 GPUs
def test_15_deepspeed_line_with_words_after_it(service):
    [done] = turns(service, "DeepSpeed flops profiler / throughput timer on 32 A100: 'epoch=0/micro_step=100/global_step=100, "
                            "RunningAvgSamplesPerSec=15.21, CurrSamplesPerSec=15.35, MemAllocated=38.2GB, "
                            "MaxMemAllocated=61.7GB' — llama 2 13b zero3, seq 4096, mb 4. calibrate")
    [call] = done.tool_calls
    assert call["arguments"]["scenario"]["model"] == "llama-2-13b"
    assert f"**{15.21 * 4096 / 32:,.0f} tokens/s per GPU**" in done.answer and "61.7 GiB" in done.answer


# 16. "how confident" with no measurement: the recommended plan's intervals
def test_16_how_confident(service):
    [done] = turns(service, "How confident are you in the throughput for llama 3.1 70b on 128 h100 with 8k context?")
    [call] = done.tool_calls
    low, high = call["result"]["best"]["tokens_per_s_per_gpu_likely"]
    assert f"likely **{low:,.0f}–{high:,.0f}**" in done.answer


# 17. a whole-job rate, its plan said before the colon, and another plan asked after: 60,000 / 8 GPUs
def test_17_whole_job_rate_then_another_plan(service):
    [done] = turns(service, "llama 8b on 8 H100, tp1, 4k, gbs 256: our job does 60,000 tokens/s in total. calibrate and "
                            "tell me what tp2 would give")
    assert calls(done) == ["calibrate_to_measurement", "compare_plans"]
    calibrate, compare = done.tool_calls
    assert calibrate["arguments"]["measured_tokens_per_s_per_gpu"] == 60_000 / 8
    assert compare["arguments"]["plan_a"]["tp"] == 1 and compare["arguments"]["plan_b"]["tp"] == 2


# 18. "two dozen B200 nodes" and a cost: 24 x 8 GPUs; GPU-hours = tokens / (tokens/s) x GPUs / 3600
def test_18_two_dozen_nodes_and_a_cost(service):
    [done] = turns(service, "two dozen B200 nodes for llama 3.1 405b, 8k, 16M tokens per batch — best plan and how long "
                            "for 15T tokens at $4/gpu-hr?")
    [call] = done.tool_calls
    assert call["arguments"]["scenario"]["gpus"] == 24 * 8 and call["arguments"]["price_per_gpu_hour"] == 4.0
    # 16M tokens = 16 x 2^20 / 8,192 = 2,048 sequences a step
    rec = recommend(get_model("llama-3.1-405b"), build_cluster("b200", 192, gpus_per_node=8),
                    TrainingSetup(seq_len=8192, global_batch=2048), top_k=1)
    gpu_hours = 15e12 / rec.plans[0].throughput.tokens_per_s * 192 / 3600
    assert f"**{gpu_hours:,.0f} GPU-hours**" in done.answer and f"**${gpu_hours * 4:,.0f}**" in done.answer


# 19. "a dozen nodes", a step time, then another plan: 768 x 8,192 tokens / 62 s / 96 GPUs
def test_19_dozen_nodes_step_time_then_compare(service):
    [done] = turns(service, "we benchmarked llama 3.1 70b on a dozen nodes of 8xH100 (tp8 pp4 zero1 mb1, seq 8192, gbs 768): "
                            "step takes 62 s. calibrate, then would tp4 pp8 be faster?")
    assert calls(done) == ["calibrate_to_measurement", "compare_plans"]
    calibrate, compare = done.tool_calls
    assert calibrate["arguments"]["scenario"]["gpus"] == 12 * 8 and per_gpu(768 * 8192, 62, 96) in done.answer
    assert (compare["arguments"]["plan_b"]["tp"], compare["arguments"]["plan_b"]["pp"]) == (4, 8)
