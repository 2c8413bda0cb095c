"""Shared check for the planner's what-if reading, used by the phrasing test files."""

from __future__ import annotations

from shardwise.agent.planner.entities import extract
from shardwise.agent.planner.intents import classify, what_if_split
from shardwise.agent.state import ConversationState


def assert_read_as_what_if(message: str, before: dict, change: dict) -> None:
    """The message splits into the scenario as it was (`before`) and as changed (`change`), and is
    classified as a what-if."""
    split = what_if_split(message)
    assert split is not None
    old, new = split[0].scenario_patch(), split[1].scenario_patch()
    assert {k: getattr(old, k) for k in before} == before
    assert {k: getattr(new, k) for k in change} == change
    assert classify(message, extract(message), ConversationState()).family == "what_if"
