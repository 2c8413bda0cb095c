"""One formatter for plan names: each style, written out by hand from how its readers write plans."""

from shardwise.engine.plan_label import STYLES, plan_label
from shardwise.engine.results import StrategySummary
from shardwise.engine.strategy import Strategy

SUMMARY = StrategySummary(tp=8, pp=2, vpp=4, cp=2, ep=1, etp=1, dp=4, zero_stage=1, micro_batch=2, grad_accum=64,
                          recompute="selective", sequence_parallel=True, hsdp_replicas=1)


def test_every_style_written_out():
    assert plan_label(SUMMARY, "cli") == "TP=8 PP=2 VPP=4 CP=2 DP=4 ZeRO-1 mb=2 recompute=selective SP"
    assert plan_label(SUMMARY, "tools") == "TP=8 PP=2 VPP=4 CP=2 DP=4 ZeRO-1 micro-batch=2 recompute=selective"
    assert plan_label(SUMMARY, "page") == "TP 8 · SP · PP 2 · VPP 4 · CP 2 · DP 4 · ZeRO-1 · mb 2 · selective recompute"
    assert plan_label(SUMMARY, "chart") == "TP8 PP2 VPP4 CP2 DP4 ZeRO-1 mb2 rc-selective"
    # evaluate's plan line: every degree, 1s included (EP=1 ETP=1 here), in the cli style's notation
    assert plan_label(SUMMARY, "cli-full") == "TP=8 PP=2 VPP=4 CP=2 EP=1 ETP=1 DP=4 ZeRO-1 mb=2 recompute=selective SP"
    assert set(STYLES) == {"cli", "cli-full", "tools", "page", "chart", "engine"}


def test_a_bare_strategy_has_no_dp_and_pp_1_shows_only_where_the_style_always_writes_it():
    s = Strategy(tp=4, zero_stage=3, micro_batch=1, recompute="none", sequence_parallel=False)
    assert s.label() == plan_label(s, "engine") == "TP4 PP1 ZeRO3 mb1 rc-none"
    assert plan_label(s, "tools") == "TP=4 ZeRO-3 micro-batch=1 recompute=none no-SP"  # SP off is said (session 13)
    assert plan_label(s, "page") == "TP 4 · ZeRO-3 · mb 1 · no recompute"  # no SP: switched off
    assert plan_label(s, "cli") == "TP=4 PP=1 ZeRO-3 mb=1 recompute=none no-SP"


def test_hsdp_is_named_where_plans_are_read_as_configs():
    s = SUMMARY.model_copy(update={"zero_stage": 3, "hsdp_replicas": 2})
    assert "HSDP=2" in plan_label(s, "cli") and "HSDP=2" in plan_label(s, "tools")
    assert "HSDP" not in plan_label(s, "page") and "HSDP" not in plan_label(s, "engine")
