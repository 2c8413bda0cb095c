"""Driving a ChatService through a conversation in the planner tests."""

from __future__ import annotations


def turns(service, *messages) -> list:
    """The DoneEvent of each turn of one conversation (tool calls, answer, session)."""
    from shardwise.agent.events import DoneEvent

    session, out = None, []
    for message in messages:
        done = next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))
        session = done.session_id
        out.append(done)
    return out


def ask(service, *messages):
    """[(tool calls [(name, arguments)], answer)] for each turn of one conversation."""
    return [([(c["name"], c["arguments"]) for c in done.tool_calls], done.answer) for done in turns(service, *messages)]


def calls(done) -> list[str]:
    """The names of the tools one turn called, in order."""
    return [c["name"] for c in done.tool_calls]
