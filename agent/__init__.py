"""The advisor you can talk to.

    from shardwise.agent.config import load_config
    from shardwise.agent.service import ChatService

    service = ChatService(load_config())          # offline planner unless an LLM is configured
    for event in service.stream("70B on 64 H100s?", session_id=None):
        ...   # SessionEvent, DeltaEvent, ToolEvent, ConfigsEvent, DoneEvent, ErrorEvent (agent/events.py)
    answer = service.ask("what if H200s?", session_id="s-…")   # the same, collected

See docs/agent.md.
"""
