"""Service settings: limits, CORS allow-list and where sessions live, read from the environment.

Every limit is a named, documented default here, not a number inside a handler. `shardwise serve`
passes its flags through the environment so each uvicorn worker process builds the same Settings.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..agent.sessions import is_database_url
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
# Threads for engine work (searches, tool calls, the offline planner): one per core, since the work
# is CPU-bound; more threads would only take turns on the same cores.
DEFAULT_WORK_THREADS = max(1, os.cpu_count() or 1)
# A new request whose engine job would wait longer than this for a thread (by the running estimate:
# jobs ahead × mean job time ÷ threads) gets 503 + Retry-After. This is what keeps the queue short.
DEFAULT_WORK_MAX_WAIT_S = 15.0
# ...and whatever the estimate, at most this many jobs wait (memory). A warm recommend search takes
# ~50-100 ms, so a full queue is ~10 s of work on 2 cores: 200 REST searches at once are all answered.
DEFAULT_WORK_QUEUE = 256
# Answers streaming at once per worker process. An LLM-backed answer waiting on the network holds a
# coroutine and a socket, not a thread; the limit only bounds memory and file descriptors.
DEFAULT_MAX_CHAT_STREAMS = 512


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
    session_db: Path | str = field(default_factory=default_session_db)  # a SQLite file or a SQLAlchemy URL
    chat_deadline_s: float = DEFAULT_CHAT_DEADLINE_S
    llm_timeout_s: float | None = None  # one LLM HTTP call; None keeps the agent's configured timeout
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS
    work_threads: int = DEFAULT_WORK_THREADS
    work_queue: int = DEFAULT_WORK_QUEUE
    work_max_wait_s: float = DEFAULT_WORK_MAX_WAIT_S
    max_chat_streams: int = DEFAULT_MAX_CHAT_STREAMS

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        """SHARDWISE_* variables; anything unset keeps its default."""
        env = dict(os.environ if env is None else env)
        kwargs: dict = {}
        ints = {"SHARDWISE_MAX_BODY_BYTES": "max_body_bytes", "SHARDWISE_RATE_LIMIT_PER_MINUTE": "rate_limit_per_minute",
                "SHARDWISE_RATE_LIMIT_BURST": "rate_limit_burst", "SHARDWISE_MAX_MESSAGE_CHARS": "max_message_chars",
                "SHARDWISE_WORK_THREADS": "work_threads", "SHARDWISE_WORK_QUEUE": "work_queue",
                "SHARDWISE_MAX_CHAT_STREAMS": "max_chat_streams"}
        floats = {"SHARDWISE_CHAT_DEADLINE_S": "chat_deadline_s", "SHARDWISE_LLM_TIMEOUT_S": "llm_timeout_s",
                  "SHARDWISE_WORK_MAX_WAIT_S": "work_max_wait_s"}
        for var, name in {**ints, **floats}.items():
            if env.get(var, "").strip():
                kwargs[name] = _number(env[var], var, int if var in ints else float)
        if env.get("SHARDWISE_CORS_ORIGINS", "").strip():
            kwargs["cors_origins"] = tuple(o.strip().rstrip("/") for o in env["SHARDWISE_CORS_ORIGINS"].split(",") if o.strip())
        if env.get("SHARDWISE_TRUST_FORWARDED_FOR", "").strip().lower() in {"1", "true", "yes"}:
            kwargs["trust_forwarded_for"] = True
        if env.get("SHARDWISE_SESSION_DB", "").strip():
            where = env["SHARDWISE_SESSION_DB"].strip()
            kwargs["session_db"] = where if is_database_url(where) else Path(where).expanduser()
        return cls(**kwargs)


def _number(text: str, var: str, kind: type):
    try:
        value = kind(text.strip())
    except ValueError:
        raise ShardwiseInputError(f"{var} must be a {kind.__name__} number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:  # NaN passed `<= 0` and became a timeout nothing can meet
        raise ShardwiseInputError(f"{var} must be positive and finite, got {text!r}")
    return value
