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
