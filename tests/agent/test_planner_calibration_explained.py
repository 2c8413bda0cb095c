""""What does calibrating change?" is a glossary question (the calibration entry: two bounded scales, what
they apply to, an impossible measurement refused), not the how-to that "can you calibrate to our cluster?"
gets. The bounds the answer states are the ones engine/assumptions/calibration_bounds.py holds."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService
from shardwise.engine.assumptions.calibration_bounds import COMM_SCALE_BOUNDS, COMPUTE_SCALE_BOUNDS


def ask(tmp_path, message):
    return list(ChatService(AgentConfig(session_db=tmp_path / "s.db")).stream(message, None))[-1]


@pytest.mark.parametrize("message", [
    "how does calibration work on your side, is it a single fudge factor?",
    "if I give you one measured step time, what does the profile change? could one noisy run throw everything off?",
])
def test_what_calibration_changes_is_explained_with_its_bounds(tmp_path, message):
    done = ask(tmp_path, message)
    assert [c["name"] for c in done.tool_calls] == ["explain_concept"]
    assert done.tool_calls[0]["arguments"]["concept"] == "calibration"
    assert f"{COMPUTE_SCALE_BOUNDS[0]}–{COMPUTE_SCALE_BOUNDS[1]}" in done.answer  # compute scale's bounds
    assert f"{COMM_SCALE_BOUNDS[0]}–{COMM_SCALE_BOUNDS[1]}" in done.answer  # network scale's bounds
    assert "refused" in done.answer and "compute-efficiency scale" in done.answer and "network scale" in done.answer


def test_a_single_node_setup_is_told_it_fits_compute_only(tmp_path):
    done = ask(tmp_path, "we train qwen2.5-7b on one node of 8 h100. what would calibrating actually change?")
    assert "compute scale only" in done.answer


def test_asking_to_calibrate_still_gets_the_how_to(tmp_path):
    done = ask(tmp_path, "can you calibrate to our cluster?")
    assert "shardwise calibrate" in done.answer and not done.tool_calls
