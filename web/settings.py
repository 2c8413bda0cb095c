"""Service settings: limits, CORS allow-list and where sessions live, read from the environment.

Every limit is a named, documented default here, not a number inside a handler. `shardwise serve`
passes its flags through the environment so each uvicorn worker process builds the same Settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.errors import ShardwiseInputError

# A Hugging Face config.json is 1-10 KB; 1 MiB leaves room for any real request body and
# refuses pasted multi-megabyte files before they are parsed.
DEFAULT_MAX_BODY_BYTES = 1 << 20
# One person clicking around or chatting makes a few requests a minute; scripts looping faster
# than this are throttled so they cannot starve other users of the 2-core box.
DEFAULT_RATE_LIMIT_PER_MINUTE = 120
DEFAULT_RATE_LIMIT_BURST = 30
# An answer that is still streaming after this long is stopped and ends with an error event.
DEFAULT_CHAT_DEADLINE_S = 120.0
# Chat messages longer than this are refused with a message (the agent applies its own limit too).
DEFAULT_MAX_MESSAGE_CHARS = 8_000
# Searches for the page and /api/recommend: never more than this many plans in one response.
MAX_TOP_K = 50


def default_session_db() -> Path:
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "shardwise" / "sessions.sqlite3"


@dataclass(frozen=True)
class Settings:
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE
    rate_limit_burst: int = DEFAULT_RATE_LIMIT_BURST
    cors_origins: tuple[str, ...] = ()
    trust_forwarded_for: bool = False  # behind a reverse proxy: key the rate limit on X-Forwarded-For
    session_db: Path = field(default_factory=default_session_db)
    chat_deadline_s: float = DEFAULT_CHAT_DEADLINE_S
    llm_timeout_s: float | None = None  # one LLM HTTP call; None keeps the agent's configured timeout
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        """SHARDWISE_* variables; anything unset keeps its default."""
        env = dict(os.environ if env is None else env)
        kwargs: dict = {}
        ints = {"SHARDWISE_MAX_BODY_BYTES": "max_body_bytes", "SHARDWISE_RATE_LIMIT_PER_MINUTE": "rate_limit_per_minute",
                "SHARDWISE_RATE_LIMIT_BURST": "rate_limit_burst", "SHARDWISE_MAX_MESSAGE_CHARS": "max_message_chars"}
        floats = {"SHARDWISE_CHAT_DEADLINE_S": "chat_deadline_s", "SHARDWISE_LLM_TIMEOUT_S": "llm_timeout_s"}
        for var, name in {**ints, **floats}.items():
            if env.get(var, "").strip():
                kwargs[name] = _number(env[var], var, int if var in ints else float)
        if env.get("SHARDWISE_CORS_ORIGINS", "").strip():
            kwargs["cors_origins"] = tuple(o.strip().rstrip("/") for o in env["SHARDWISE_CORS_ORIGINS"].split(",") if o.strip())
        if env.get("SHARDWISE_TRUST_FORWARDED_FOR", "").strip().lower() in {"1", "true", "yes"}:
            kwargs["trust_forwarded_for"] = True
        if env.get("SHARDWISE_SESSION_DB", "").strip():
            kwargs["session_db"] = Path(env["SHARDWISE_SESSION_DB"]).expanduser()
        return cls(**kwargs)


def _number(text: str, var: str, kind: type):
    try:
        value = kind(text.strip())
    except ValueError:
        raise ShardwiseInputError(f"{var} must be a {kind.__name__} number, got {text!r}") from None
    if value <= 0:
        raise ShardwiseInputError(f"{var} must be positive, got {text!r}")
    return value
