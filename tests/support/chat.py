"""Driving a ChatService through a conversation in the planner tests."""

from __future__ import annotations


def ask(service, *messages):
    """[(tool calls [(name, arguments)], answer)] for each turn of one conversation."""
    from shardwise.agent.events import DoneEvent

    session, out = None, []
    for message in messages:
        done = next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))
        session = done.session_id
        out.append(([(c["name"], c["arguments"]) for c in done.tool_calls], done.answer))
    return out
