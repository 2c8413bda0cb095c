"""The offline planner on the failure causes fresh set 17's first run exposed, each in phrasings of our own, not
the eval cases'. Expected values are read off the sentence by hand (0.52 s x 32 micro-batches = 16.64 s) or taken
from the engine's tool result of the same turn, never pasted from the planner's answer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from shardwise.agent.planner.entities import extract
from shardwise.agent.planner.intents import UNCERTAINTY
from shardwise.agent.planner.measured import (measured_mfu_percent, measured_run, measured_step_time,
                                              measured_throughput, measured_total_throughput)
from shardwise.agent.planner.quantities import find_grad_accum
from shardwise.agent.planner.target_rate import target_rate, verdict

from support.chat import turns


# ---- 1. "worst case" alone asks for the slow end of the interval ----------------------------------------------
@pytest.mark.parametrize("message", ["and worst case step time for that one?", "what's the worst-case throughput there",
                                     "give me a pessimistic estimate of the step"])
def test_worst_case_asks_for_the_interval(message):
    assert UNCERTAINTY.search(message.lower())


def test_worst_case_after_a_recommendation_quotes_the_step_band_top(make_service):
    first, second = turns(make_service(), "llama 3.1 8b, 16 h100s, 8k context, global batch 256: what plan?",
                          "worst-case step time on it?")
    assert second.tool_calls, "a tool is called for the interval"
    plan = second.tool_calls[-1]["result"].get("plan") or second.tool_calls[-1]["result"].get("best")
    high_s = plan["step_ms_likely"][1] / 1000  # the top of the tool's own 80 % band, in seconds
    assert f"{high_s:.1f} s" in second.answer


# ---- 2-5. measured figures in the ways people say them ----------------------------------------------------------
def test_an_mfu_said_as_it_is_doing():
    assert measured_mfu_percent("our MFU is hovering around 38%. can you calibrate?") == 38
    assert measured_mfu_percent("mfu has been sitting at 41 % on the dashboard") == 41


def test_tokens_per_second_per_device_folded_into_the_model():
    assert measured_throughput("tp2 zero1 mbs2 -> ~8.6k tokens/sec per device. fold that into your model") == 8600


def test_a_whole_jobs_rate_in_millions():
    text = "llama 3.1 8b, 128 h100, 8k, gbs 1024. the whole job does ~1.23 million tokens/s. calibrate to that"
    assert measured_total_throughput(text) == 1.23e6
    run = measured_run(text)
    assert run.kind == "tokens_per_s_total"
    # per GPU over the job's 128 GPUs: 1,230,000 / 128 = 9,609.375 (hand division)
    assert run.tool_arguments(128)["measured_tokens_per_s_per_gpu"] == pytest.approx(9609.375)
    assert extract(text).global_batch == 1024  # "1.23 million tokens/s" is a rate, not a 1.23M-token batch


@pytest.mark.parametrize("text, seconds", [("each iter takes ~1 min 39 s. calbrate pls", 60 + 39),
                                           ("our steps take 1m05s, calibrate", 65),
                                           ("we measured 2 minutes per step", 120)])
def test_a_step_in_minutes(text, seconds):
    assert measured_step_time(text) == seconds


def test_a_time_per_micro_batch_times_the_micro_batches_per_step():
    run = measured_run("ahh, the 0.52s is the per-micro-batch counter, there are 32 micro-batches per optimizer step. now?")
    assert run.kind == "step_s" and run.value == pytest.approx(0.52 * 32)  # 16.64 s
    assert run.per_micro_batch == (0.52, 32)
    run = measured_run("sorry, each micro-batch takes 600 ms and grad accum is 16")
    assert run.value == pytest.approx(0.6 * 16)  # 9.6 s


def test_the_correction_calibrates_the_plan_of_the_first_message(make_service):
    # the first figure is impossible (0.52 s for 1024 x 8192 tokens on 64 GPUs); the correction fits 0.52 x 32 s
    first, second = turns(make_service(), "llama3.1 8b, 64x h100, 8k ctx, gbs 1024, tp2 dist-opt mbs1. we're at "
                                          "0.52 s/it, calibrate to that",
                          "my mistake: 0.52 s was each micro-batch, grad accum is 32. redo it")
    [call] = second.tool_calls
    assert call["name"] == "calibrate_to_measurement" and call["ok"]
    assert call["arguments"]["measured_step_s"] == pytest.approx(16.64)
    assert call["arguments"]["plan"]["tp"] == 2 and call["arguments"]["plan"]["micro_batch"] == 1


# ---- 6. "my 4090" is one GPU ------------------------------------------------------------------------------------
@pytest.mark.parametrize("message, gpus", [("qlora qwen2.5 14b on my 4090 (24gb), 2k seq", 1),
                                           ("lora llama 3.1 8b with my rtx 4090, batch 8", 1),
                                           ("llama 3.1 8b on my h100 cluster", None),  # a group: asked, not 1
                                           ("llama 3.1 8b on my 4090s", None),  # plural
                                           ("llama 3.1 8b on my four 4090s", 4),
                                           ("llama 3.1 8b on our a100", None)])  # a team's: often many
def test_my_gpu_is_one_gpu(message, gpus):
    assert extract(message).gpus == gpus


# ---- 7. a throughput the user needs -----------------------------------------------------------------------------
def _best(tokens_per_s_per_gpu, low, high, gpus):
    return SimpleNamespace(tokens_per_s=tokens_per_s_per_gpu * gpus, tokens_per_s_per_gpu=tokens_per_s_per_gpu,
                           tokens_per_s_per_gpu_likely=[low, high])


def test_a_target_in_samples_is_converted_at_the_sequence_length():
    t = target_rate("we need ~12 samples/sec to finish on time. can we hit that?")
    assert (t.value, t.samples, t.per_gpu) == (12, True, False)
    assert t.tokens_per_s(4096, 8) == 12 * 4096  # 49,152 tokens/s for the job
    # 8 GPUs at 3,989 tokens/s each (band 3,095-4,732): the band's top is 8 x 4,732 = 37,856 < 49,152
    assert verdict(t, _best(3989, 3095, 4732, 8), 4096, 8) == "out_of_reach"


@pytest.mark.parametrize("per_gpu, low, high, status", [
    (7000, 6500, 8000, "reachable"),     # 16 x 6,500 = 104,000 >= 100,000
    (7000, 6000, 8000, "likely"),        # 16 x 7,000 = 112,000 >= 100,000 > 16 x 6,000 = 96,000
    (6000, 5000, 7000, "borderline"),    # 96,000 < 100,000 <= 16 x 7,000 = 112,000
    (5000, 4000, 6000, "out_of_reach"),  # 16 x 6,000 = 96,000 < 100,000
])
def test_a_target_in_tokens_for_the_job(per_gpu, low, high, status):
    t = target_rate("we must sustain 100k tokens/s overall")
    assert t.tokens_per_s(8192, 16) == 100_000
    assert verdict(t, _best(per_gpu, low, high, 16), 8192, 16) == status


def test_a_target_per_gpu():
    t = target_rate("target 4,000 tok/s per gpu")
    assert t.per_gpu and t.tokens_per_s(4096, 8) == 32_000


def test_a_target_is_no_measurement():
    assert measured_run("we need 50k tokens/s, can we hit that?") is None


def test_the_recommendation_says_whether_the_target_is_reachable(make_service):
    [done] = turns(make_service(), "mistral 7b full finetune on 8x a100 80g, 4096 tokens/sample, bs 128. we need "
                                   "~12 samples/sec. best setup and can we hit that?")
    best = done.tool_calls[0]["result"]["best"]
    need = 12 * 4096  # tokens/s the target asks of the job
    if best["tokens_per_s_per_gpu_likely"][1] * 8 < need:  # the engine's own band decides which answer is right
        assert "out of reach" in done.answer
    else:
        assert "out of reach" not in done.answer


# ---- 9. a torchtitan log's 2-D mesh and a batch per DP rank -----------------------------------------------------
LOG = ("older torchtitan build, mistral 7b on one 8xH100 box, seq 4096, batch_size 4 per dp rank, no grad accum\n"
       "[titan] 2024-07-18 13:20:03,112 - root - INFO - Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]\n"
       "[titan] 2024-07-18 13:21:23,004 - root - INFO - step: 10  loss:  8.2210  memory: 52.40GiB(66.24%)  wps: 6,588  mfu: 31.59%\n"
       "[titan] 2024-07-18 13:21:35,391 - root - INFO - step: 20  loss:  7.3405  memory: 52.40GiB(66.24%)  wps: 6,612  mfu: 31.70%\n"
       "calibrate to this pls")


def test_a_batch_per_dp_rank_with_no_accumulation():
    e = extract("seq 4096, batch_size 4 per dp rank, no grad accum")
    assert e.plans == [{"micro_batch": 4}] and e.global_batch is None
    assert find_grad_accum("no grad accum") == 1 and find_grad_accum("w/o gradient accumulation") == 1


def test_sequences_per_gpu_are_a_micro_batch_not_an_accelerator():
    e = extract("same global batch, so 2 seqs per gpu")
    assert e.gpu is None and e.plans == [{"micro_batch": 2}]


def test_dropping_a_named_degree_turns_it_off():
    assert extract("would plain fsdp w/o the tp2 be quicker?").plans == [{"tp": 1, "pp": 1, "zero": 3}]
    assert extract("what about dropping the pp2").plans == [{"pp": 1}]


def test_the_log_mesh_and_the_per_rank_batch_give_the_global_batch(make_service):
    [done] = turns(make_service(), LOG)
    [call] = done.tool_calls
    # 4 sequences per DP rank x 1 (no accumulation) x 4 DP ranks (8 GPUs / TP 2, the log's mesh) = 16
    assert call["arguments"]["scenario"]["global_batch"] == 16
    assert call["arguments"]["plan"]["micro_batch"] == 4


# ---- a bare checkpointing listed among settings asked about ------------------------------------------------------
def test_which_activation_checkpointing_asks_rather_than_sets():
    assert extract("which micro-batch and activation checkpointing?").plans == []
    assert extract("tp4 pp2 with act ckpt").plans == [{"tp": 4, "pp": 2, "recompute": "full"}]
