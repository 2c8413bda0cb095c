"""Agent tests never leave the machine: every socket connect to a non-loopback address fails
loudly, on top of respx's own assert_all_mocked routers."""

from __future__ import annotations

import ipaddress
import socket

import pytest


class NetworkAccessBlocked(RuntimeError):
    pass


def _is_loopback(address) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    else:
        return True  # AF_UNIX paths and the like stay on the machine
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in ("localhost",)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    blocked: list = []  # every attempt, so a test can prove one was made and stopped
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self, address):
        if not _is_loopback(address):
            blocked.append(address)
            raise NetworkAccessBlocked(f"test tried to connect to {address!r}")
        return real_connect(self, address)

    def guarded_connect_ex(self, address):
        if not _is_loopback(address):
            blocked.append(address)
            raise NetworkAccessBlocked(f"test tried to connect to {address!r}")
        return real_connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if host not in (None, "localhost") and not _is_loopback((host,)):
            blocked.append(host)
            raise NetworkAccessBlocked(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield blocked


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    """No test reads the user's config or writes into their home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for var in ("SHARDWISE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SHARDWISE_CONFIG",
                "SHARDWISE_SESSION_DB", "SHARDWISE_LLM_FALLBACK"):
        monkeypatch.delenv(var, raising=False)


class FakeModel:
    """A scripted ChatModel: each step is a reply {"text": ..., "calls": [(name, arguments), ...]},
    an exception to raise, or a function of the messages returning such a reply. Every request
    (messages and tools) is recorded for the test to inspect."""

    name = "fake-model"

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests: list[dict] = []

    def stream(self, messages, tools, *, deadline):
        import copy
        import json

        from shardwise.agent.model import ModelReply, TextDelta, ToolCall

        self.requests.append({"messages": copy.deepcopy(messages), "tools": tools, "deadline": deadline})
        if not self.steps:
            raise AssertionError("the fake model ran out of scripted replies")
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            step = step(messages)
        text = step.get("text", "")
        for i in range(0, len(text), 7):  # stream in small pieces, as a server would
            yield TextDelta(text[i:i + 7])
        calls = [ToolCall(id=f"call_{len(self.requests)}_{i}", name=name,
                          arguments=args if isinstance(args, str) else json.dumps(args))
                 for i, (name, args) in enumerate(step.get("calls", []))]
        yield ModelReply(text=text, tool_calls=calls, finish_reason="tool_calls" if calls else "stop")


@pytest.fixture
def fake_model():
    return FakeModel


@pytest.fixture
def make_service(tmp_path):
    """ChatService(config, model) on a private session file."""
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService

    def make(model=None, **config):
        config.setdefault("session_db", tmp_path / "sessions.sqlite3")
        return ChatService(AgentConfig(**config), model=model)

    return make
