"""Settings said for both plans of a comparison ("either way", "for both") in a sentence before the contrast
apply to both plans, not to the first alone (the second was then filled in by the search: ZeRO-2 mb4)."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.knobs import find_plans
from shardwise.agent.service import ChatService


@pytest.mark.parametrize("text, plans", [
    ("mixtral on 64 h100, 8k. zero2 mb2 either way. tp2 ep8 vs tp4 ep4, which wins?",
     [{"zero": 2, "micro_batch": 2, "tp": 2, "ep": 8}, {"zero": 2, "micro_batch": 2, "tp": 4, "ep": 4}]),
    ("qwen 32b on 16 h100. full recompute and mb1 for both. tp2 pp2 or plain tp4?",
     [{"recompute": "full", "micro_batch": 1, "tp": 2, "pp": 2}, {"recompute": "full", "micro_batch": 1, "tp": 4}]),
    ("tp4 pp2 zero1 vs tp8", [{"tp": 4, "pp": 2, "zero": 1}, {"tp": 8}]),  # said of plan A only: not shared
])
def test_knobs_said_before_the_contrast_go_to_both_plans(text, plans):
    assert find_plans(text) == plans


def test_the_comparison_runs_both_plans_with_the_shared_settings(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream("llama 3.1 8b on 16 h100, 4k, gbs 128. zero1 mb2 either way. tp2 pp2 vs plain tp4, "
                               "which is faster?", None))[-1]
    call = next(c for c in done.tool_calls if c["name"] == "compare_plans")
    for side in ("plan_a", "plan_b"):
        assert (call["arguments"][side]["zero"], call["arguments"][side]["micro_batch"]) == (1, 2)
    assert call["arguments"]["plan_b"]["tp"] == 4 and not any(c["name"] == "recommend_plans" for c in done.tool_calls)
