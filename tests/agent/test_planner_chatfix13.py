"""The offline planner on the failure causes fresh set 13's first run exposed, each in phrasings of our own, not
the eval cases'. Expected values are read off the sentence by hand ("six HGX boxes" of eight GPUs is 48 GPUs) or
taken from the engine's tools called directly, never from the planner's answer."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract

from support.chat import ask


# ---- 1. a DGX/HGX is a server: its count is a count of nodes --------------------------------------------------
@pytest.mark.parametrize("message, nodes", [
    ("we might get six HGX boxes instead of two next month", 6),
    ("what about 4 DGX nodes", 4),
    ("budget allows three DGXs", 3),
    ("say 12 hgx servers", 12),
])
def test_a_count_of_dgx_or_hgx_servers_is_nodes(message, nodes):
    assert extract(message).nodes == nodes


def test_servers_instead_of_two_after_calibrating_scale_the_gpus(make_service):
    # 2 nodes of 8 H100 first; "six HGX boxes" of the same 8 GPUs per node: 6 x 8 = 48 GPUs
    turns = ask(make_service(), "llama-3.1-8b on 16x h100 (2 nodes IB), 4096 seq, gbs 512. tp1 zero3 mbs 2 does "
                                "9,100 tok/s/gpu for us, calibrate",
                "we may end up with six HGX boxes instead of two. best plan there with our profile?")
    calls, _ = turns[1]
    assert calls and calls[-1][1]["scenario"]["gpus"] == 6 * 8


# ---- 3. an accelerator outside the catalog is called unsupported in plain words --------------------------------
@pytest.mark.parametrize("message, name", [("could you size llama 3.1 8b for 32 gaudi2 cards?", "Intel Gaudi"),
                                           ("plan mistral 7b on a trainium2 pod of 16", "AWS Trainium")])
def test_an_unknown_accelerator_is_said_to_be_unsupported(make_service, message, name):
    [(calls, answer)] = ask(make_service(), message)
    # no plan tool; the catalog's GPUs listed so the refusal names what is supported (session 10, chatfix14b)
    assert [c[0] for c in calls] == ["list_hardware"] and f"I can't plan for {name}: it is not a supported accelerator" in answer


# ---- 4. what the samples were packed to is the sequence length, its unit left unsaid -------------------------
@pytest.mark.parametrize("message, seq_len", [
    ("sft on 16 a100s, all seqs packed to 4096", 4096),
    ("samples were padded to 2k", 2048),
    ("examples get packed into 8192, gbs 64", 8192),
])
def test_samples_packed_to_a_length_give_the_sequence_length(message, seq_len):
    assert extract(message).seq_len == seq_len


@pytest.mark.parametrize("message", ["seqs padded to 8 gpus", "docs packed into 16 sequences"])
def test_a_count_after_packed_is_not_a_length(message):
    assert extract(message).seq_len is None


DS_CONFIG = ("[2026-11-22 18:02:11,104] [INFO] [config.py:988:print] DeepSpeedEngine configuration:\n"
             "[2026-11-22 18:02:11,105] [INFO] [config.py:992:print]   train_batch_size ............. 128\n"
             "[2026-11-22 18:02:11,105] [INFO] [config.py:992:print]   world_size ................... 16\n")
DS_PLAN = ("[2026-11-22 18:02:11,105] [INFO] [config.py:992:print]   train_micro_batch_size_per_gpu  1\n"
           "[2026-11-22 18:02:11,105] [INFO] [config.py:992:print]   zero_optimization_stage ...... 2\n")
DS_TIMER = ("[2026-11-22 18:09:40,812] [INFO] [timer.py:260:stop] epoch=0/micro_step=400/global_step=50, "
            "RunningAvgSamplesPerSec=10.0, CurrSamplesPerSec=10.0, MemAllocated=17.2GB, MaxMemAllocated=49.87GB\n")
DS_ASK = "llama 3.1 8b sft w/ deepspeed on 2 nodes 8x a100 80gb, every sample packed to 4096. vs your prediction?\n\n"


def test_a_samples_per_second_log_with_packed_length_is_calibrated(make_service):
    # DeepSpeed's ThroughputTimer: RunningAvgSamplesPerSec is the job's samples/s; 10.0 samples/s x 4,096 tokens
    # / 16 GPUs = 2,560 tokens/s per GPU
    [(calls, answer)] = ask(make_service(), DS_ASK + DS_CONFIG + DS_PLAN + DS_TIMER)
    assert [name for name, _ in calls] == ["calibrate_to_measurement"]
    assert calls[0][1]["scenario"]["seq_len"] == 4096
    assert f"**{10.0 * 4096 / 16:,.0f} tokens/s per GPU**" in answer


def test_a_log_without_its_plan_asks_for_the_plan_and_exports_nothing(make_service):
    # the log's own "DeepSpeedEngine configuration" line is no request for a config file
    [(calls, answer)] = ask(make_service(), DS_ASK + DS_CONFIG + DS_TIMER)
    assert calls == [] and "Which plan did that run use?" in answer


# ---- 5. plain DDP is pure data parallelism with the whole optimizer on every rank: ZeRO-0 ----------------------
@pytest.mark.parametrize("message, plan", [
    ("HF Trainer + peft, plain DDP on 4 a100", {"tp": 1, "pp": 1, "zero": 0}),
    ("vanilla ddp but with zero 2", {"tp": 1, "pp": 1, "zero": 2}),  # a stage said wins
])
def test_plain_ddp_is_zero_0(message, plan):
    assert extract(message).plans == [plan]
