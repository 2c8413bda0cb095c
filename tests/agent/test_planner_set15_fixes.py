"""Session 11's fixes for the failures of fresh set 15's first run (branch chatfix15), each checked on fresh phrasings
written for these tests (not the eval cases' text): an MFU written as a fraction without its leading zero ("mfu .33")
and a throughput whose rate is named before the figure and "per GPU" after it ("tps ~4.8k per gpu") are measurements
to calibrate on.

Expected values are the user's own figures or the tools' results in the same test, never the planner's answer copied
in."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.events import DoneEvent
from shardwise.agent.planner.measured import measured_run
from shardwise.agent.service import ChatService

from support.chat import calls, turns


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def call(done: DoneEvent, name: str) -> dict:
    return next(c for c in done.tool_calls if c["name"] == name)


@pytest.mark.parametrize("text, fraction", [
    ("qwen2.5 7b on 8 h100, tp2 zero1 mb1, seq 4k, gbs 128. wandb says mfu .33, calibrate to it", 0.33),
    ("llama 3.1 8b fsdp on 16 h100, 8k ctx, gbs 64, mb 1: our run sits at .405 mfu. recalibrate pls", 0.405),
])
def test_an_mfu_fraction_without_its_leading_zero_is_calibrated_on(service, text, fraction):
    [done] = turns(service, text)
    assert calls(done) == ["calibrate_to_measurement"]
    assert call(done, "calibrate_to_measurement")["arguments"]["measured_mfu"] == pytest.approx(fraction)


def test_a_whole_number_before_mfu_stays_a_plans():
    # "tp 8 mfu 41%": the 8 is the TP degree; the MFU is the 41 % after the word
    assert measured_run("we measured tp 8 mfu 41% on our cluster").value == pytest.approx(41.0)


@pytest.mark.parametrize("text, per_gpu", [
    ("mistral 7b on 16 h100, fsdp, 4k, gbs 256, mb 2, no tp. tps ~4.8k per gpu, calibrate", 4800.0),
    ("qwen2.5 14b, 32 h100, megatron tp4 zero1 mbs1, seq 8192, gbs 512; tok/s 2,150/gpu measured. fit to that", 2150.0),
])
def test_a_rate_named_before_its_per_gpu_figure_is_calibrated_on(service, text, per_gpu):
    [done] = turns(service, text)
    assert calls(done) == ["calibrate_to_measurement"]
    assert call(done, "calibrate_to_measurement")["arguments"]["measured_tokens_per_s_per_gpu"] == pytest.approx(per_gpu)


@pytest.mark.parametrize("text, measured, capacity", [
    # the A100 SXM4 40GB holds 40 GiB and the H100 SXM5 80GB 80 GiB (the catalog's memory_gib); each figure is above
    # 52 GB as written is 52e9 / 2**30 = 48.4 GiB (session 12: GB = 1e9 bytes), still above 40 GiB
    ("mistral 7b on 8 a100 40gb, zero2 mb1, seq 2k, gbs 64. nvidia-smi shows 52 GB used per gpu at peak, is that expected?",
     52e9 / 2**30, 40),
    ("qwen2.5 14b on 16 h100, tp2 zero1 mb1, 8k, gbs 128; max_memory_allocated came back as 88.2 GiB on rank 0. "
     "can you fit memory to that?", 88.2, 80),
])
def test_a_measured_peak_above_the_gpus_memory_is_refused_as_impossible(service, text, measured, capacity):
    [done] = turns(service, text)
    peak = call(done, "estimate_memory")["result"]["measured_peak"]
    assert peak["measured_gib"] == pytest.approx(measured, abs=0.01) and peak["above_capacity"] is True
    assert f"Your measured {measured:.1f} GiB per GPU is impossible" in done.answer
    assert f"its whole memory, {capacity} GiB" in done.answer
    assert "outside" not in done.answer and "holds your" not in done.answer  # set against no band, no setting blamed


def test_a_logs_peak_above_the_gpus_memory_is_said_impossible_beside_the_calibration(service):
    # DeepSpeed's timer line prints MaxMemAllocated per rank; 45.61 on a 40 GiB A100 cannot be one GPU's peak
    log = "\n".join([
        "llama 2 7b on 8 a100 40gb, deepspeed, seq 4096. here's the log, please calibrate",
        "[2026-03-07 15:20:40,512] [INFO] [config.py:988:print] DeepSpeedEngine configuration:",
        "[2026-03-07 15:20:40,512] [INFO] [config.py:992:print]   train_batch_size ............. 64",
        "[2026-03-07 15:20:40,512] [INFO] [config.py:992:print]   train_micro_batch_size_per_gpu  1",
        "[2026-03-07 15:20:40,513] [INFO] [config.py:992:print]   world_size ................... 8",
        "[2026-03-07 15:20:40,513] [INFO] [config.py:992:print]   zero_optimization_stage ...... 3",
        "[2026-03-07 15:25:44,931] [INFO] [timer.py:260:stop] epoch=0/micro_step=10/global_step=10, "
        "RunningAvgSamplesPerSec=3.10, CurrSamplesPerSec=3.12, MemAllocated=6.01GB, MaxMemAllocated=45.52GB",
        "[2026-03-07 15:26:02,646] [INFO] [timer.py:260:stop] epoch=0/micro_step=20/global_step=20, "
        "RunningAvgSamplesPerSec=3.11, CurrSamplesPerSec=3.13, MemAllocated=6.01GB, MaxMemAllocated=45.61GB"])
    [done] = turns(service, log)
    assert calls(done) == ["calibrate_to_measurement"]
    assert call(done, "calibrate_to_measurement")["result"]["measured_peak"]["above_capacity"] is True
    assert "Your measured 45.6 GiB per GPU is impossible" in done.answer and "its whole memory, 40 GiB" in done.answer


@pytest.mark.parametrize("text", [
    "is deepep even supported in deepspeed or torchtitan, or is it a megatron-only thing? and nanotron?",
    "qwen3 30b-a3b moe: which training stacks can do deepep dispatch these days?",
])
def test_which_frameworks_offer_deepep_is_answered_from_the_engines_rule(service, text):
    [done] = turns(service, text)
    assert calls(done) == ["explain_concept"]
    result = call(done, "explain_concept")["result"]
    assert call(done, "explain_concept")["arguments"]["concept"] == "moe_dispatcher"
    # the frameworks offering DeepEP, read in their packages (docs/search.md, session 11): Megatron-Core's flex
    # dispatcher, DeepSpeed AutoEP, torchtitan; nanotron has no expert parallelism
    assert result["numbers"]["deepep_frameworks"] == "megatron, deepspeed, fsdp"
    assert "and not by nanotron" in done.answer and "torchtitan (FSDP2)" in done.answer


def test_would_deepep_help_and_who_has_it_after_a_run_prices_it_and_lists_the_frameworks(service):
    first, second = turns(service, "deepseek-v2-lite on 16 h100, megatron tp1 ep8 zero1 mb1, 4k, gbs 256, alltoall "
                                    "dispatcher. we measured 6100 tok/s/gpu, calibrate",
                          "is deepep worth it for us? also, should we leave megatron - does deepspeed or "
                          "nanotron support deepep at all?")
    assert calls(first) == ["calibrate_to_measurement"]
    assert calls(second) == ["what_if", "explain_concept"]
    change = call(second, "what_if")["arguments"]["change"]
    assert change["moe_dispatcher"] == "deepep" and change["framework"] is None  # the frameworks asked about stay topics
    assert "and not by nanotron" in second.answer


@pytest.mark.parametrize("text, a, b", [
    ("qwen2.5 14b on 16 h100, 8k, gbs 128, mb 1 for both. my teammate wants tp4 + zero1, i'd rather tp2 + zero3. "
     "who's right?", {"tp": 4, "zero": 1, "micro_batch": 1}, {"tp": 2, "zero": 3, "micro_batch": 1}),
    ("llama 3.1 70b on 64 h100, seq 8k, gbs 512: my lead runs tp 8 pp 2; I would go tp 4 pp 4 - which is better?",
     {"tp": 8, "pp": 2}, {"tp": 4, "pp": 4}),
])
def test_two_peoples_plans_in_one_message_are_compared(service, text, a, b):
    [done] = turns(service, text)
    assert calls(done) == ["compare_plans"]
    args = call(done, "compare_plans")["arguments"]
    assert {k: v for k, v in args["plan_a"].items() if v is not None} == a
    assert {k: v for k, v in args["plan_b"].items() if v is not None} == b


@pytest.mark.parametrize("text, written", [
    ("what layout for qwen2.5 7b across 64 tenstorrent wormhole n300 boards, 4k seq?", "tenstorrent wormhole n300"),
    ("can you plan mistral 7b on 16 v100s?", "v100"),  # an NVIDIA GPU, but not one the catalog has specs for
])
def test_an_accelerator_the_catalog_lacks_is_refused_naming_the_catalog(service, text, written):
    [done] = turns(service, text)
    assert calls(done) == ["list_hardware"]
    assert f'I can\'t plan for "{written}": it is not a supported accelerator' in done.answer
    assert "`h100-sxm`" in done.answer and "`mi300x`" in done.answer  # the catalog's GPUs, named


@pytest.mark.parametrize("text", ["plan for llama 3.1 8b on 8 nvidia gpus", "plan for llama 3.1 8b on 8 blackwell gpus"])
def test_a_vendor_or_architecture_alone_is_no_unlisted_accelerator(service, text):
    # "8 nvidia gpus", "8 blackwell gpus" name no part (a Blackwell may be the catalog's B200): asked for, not refused
    [done] = turns(service, text)
    assert "not a supported accelerator" not in done.answer and "gpu" in done.answer.lower()


@pytest.mark.parametrize("question", [
    "ok so where is the step time spent for that plan? does the optimizer matter at all?",
    "what eats the step time there - compute, comms, optimizer?",
])
def test_where_the_step_time_goes_is_the_plans_time_terms(service, question):
    first, second = turns(service, "qwen2.5 32b on 32 h100, megatron, 8k seq, gbs 256 - what plan?", question)
    assert calls(first) == ["recommend_plans"] and calls(second) == ["evaluate_plan"]
    best = call(first, "recommend_plans")["result"]["best"]["strategy"]
    plan = call(second, "evaluate_plan")["arguments"]["plan"]
    assert (plan["tp"], plan["zero"], plan["micro_batch"]) == (best["tp"], best["zero_stage"], best["micro_batch"])
    terms = {t["name"]: t["value"] for t in call(second, "evaluate_plan")["result"]["plan"]["time_terms"]}
    assert "optimizer phase" in terms and "compute" in terms  # the step's parts, the optimizer phase among them
    assert "- optimizer phase:" in second.answer and "- compute:" in second.answer
