"""--moe-a2a-overlap on a plan Megatron-Core cannot overlap (EP=1, the allgather dispatcher, full recompute, PP
without VPP) is said in a warning, and the warnings and exports no longer claim an overlap the time leaves out.

Before, such a plan was predicted without the overlap (performance/ep.py `overlap_allowed`) while the
expert_all_to_all_pricing warning said "overlapped with the other micro-batch" and the Megatron-Bridge export
note said the plan "was priced with ... EP all-to-all overlap".
"""

from __future__ import annotations

import re

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.engine.export import export_plan
from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

MIXTRAL = resolve_model("mixtral-8x7b")
FLAG_LINE = re.compile(r"^\s+--overlap-moe-expert-parallel-comm\s*$", re.M)  # an argument line of the script
CLUSTER = build_cluster("h100-sxm", 16)  # 2 nodes: the pricing warning is said on multi-node MoE


def run(overlap: bool, dispatcher: str = "alltoall", **plan):
    setup = TrainingSetup(moe_a2a_overlap=overlap, moe_dispatcher=dispatcher)
    return setup, evaluate(MIXTRAL, CLUSTER, setup, Strategy(**plan))


def rules(e) -> dict[str, str]:
    return {w.rule: w.message for w in e.warnings}


@pytest.mark.parametrize("dispatcher,plan,blocker", [
    ("alltoall", dict(ep=1), "EP=1"),
    ("allgather", dict(ep=8), "allgather"),
    ("alltoall", dict(ep=8, recompute="full"), "full recompute"),
    ("alltoall", dict(ep=8, pp=2), "PP=2 without VPP"),
])
def test_overlap_that_cannot_apply_is_said_and_not_priced(dispatcher, plan, blocker):
    _, asked = run(True, dispatcher, **plan)
    _, plain = run(False, dispatcher, **plan)
    # Invariant: the overlap is not applied, so the step is the one without the flag.
    assert asked.time.step_s == pytest.approx(plain.time.step_s, rel=1e-12)
    said = rules(asked)
    assert blocker in said["moe_a2a_overlap_not_applied"]
    assert "overlapped with the other micro-batch" not in said["expert_all_to_all_pricing"]
    assert "moe_a2a_overlap_not_applied" not in rules(plain)


@pytest.mark.parametrize("plan", [dict(ep=8), dict(ep=8, pp=2, vpp=2)])
def test_overlap_that_applies_is_priced_and_said(plan):
    _, asked = run(True, **plan)
    _, plain = run(False, **plan)
    assert asked.time.ep_comm_s < plain.time.ep_comm_s  # part of the all-to-all hidden
    said = rules(asked)
    assert "moe_a2a_overlap_not_applied" not in said
    assert "overlapped with the other micro-batch" in said["expert_all_to_all_pricing"]


def test_exports_follow_the_plan_not_the_flag():
    setup, _ = run(True, ep=8, pp=2)  # PP without VPP: no overlap
    megatron = export_plan("megatron", MIXTRAL, CLUSTER, setup, Strategy(ep=8, pp=2)).text
    assert not FLAG_LINE.search(megatron)  # (the header's note may name the flag)
    bridge = export_plan("megatron-bridge", MIXTRAL, CLUSTER, setup, Strategy(ep=8, pp=2))
    assert not any("EP all-to-all overlap" in w for w in bridge.warnings)
    assert any("moe_a2a_overlap is set, but this plan cannot overlap" in w for w in bridge.warnings)
    setup, _ = run(True, ep=8)
    assert FLAG_LINE.search(export_plan("megatron", MIXTRAL, CLUSTER, setup, Strategy(ep=8)).text)


@pytest.mark.parametrize("framework", ["fsdp", "deepspeed"])
def test_the_pricing_warning_offers_the_overlap_only_where_it_can_be_set(framework):
    # moe_a2a_overlap is refused outside Megatron-Core (training.py MEGATRON_ONLY_OPTIONS; observed:
    # `shardwise evaluate --framework fsdp --moe-a2a-overlap` exits 2), yet the warning told fsdp users to pass it.
    with pytest.raises(ValueError, match="moe_a2a_overlap is a Megatron-Core option"):
        TrainingSetup(framework=framework, moe_a2a_overlap=True)
    e = evaluate(MIXTRAL, CLUSTER, TrainingSetup(framework=framework), Strategy(ep=8))
    message = rules(e)["expert_all_to_all_pricing"]
    assert "moe_a2a_overlap" not in message and "Megatron's default" not in message
    assert "not overlapped" in message and "moe_dispatcher" in message  # DeepEP is offered there (docs/search.md)
    megatron = rules(evaluate(MIXTRAL, CLUSTER, TrainingSetup(), Strategy(ep=8)))["expert_all_to_all_pricing"]
    assert "moe_a2a_overlap" in megatron
