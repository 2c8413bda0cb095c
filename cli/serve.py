"""`shardwise serve`: the web page, the REST API and the chat over HTTP (FastAPI under uvicorn)."""

from __future__ import annotations

import argparse
import math
import os
import sys

from ..engine.errors import ShardwiseInputError
from .common import positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the web page, REST API and chat",
                              description="Serve the advisor's page at http://HOST:PORT/, the REST API under /api "
                                          "(documented at /docs) and the embeddable chat widget at /widget.js.")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=positive_int, default=8000)
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes; chat sessions live in SQLite, so any worker continues any conversation")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="a site allowed to embed the chat widget, e.g. https://docs.example.com (repeatable)")
    p.add_argument("--session-db", help="chat sessions: a SQLite file (default ~/.local/state/shardwise/sessions.sqlite3) or a SQLAlchemy URL such as postgresql+psycopg://user@host/db")
    p.add_argument("--llm-timeout", type=float, metavar="SECONDS", help="timeout of one LLM request (when an LLM is configured)")
    p.add_argument("--rate-limit", type=positive_int, metavar="PER_MINUTE", help="API requests per minute per client (default 120)")
    p.add_argument("--max-body-bytes", type=positive_int, help="largest request body accepted (default 1 MiB)")
    p.set_defaults(handler=run)


def settings_env(args: argparse.Namespace) -> dict[str, str]:
    """The flags as SHARDWISE_* variables: every uvicorn worker process reads the same settings."""
    env: dict[str, str] = {}
    if args.cors_origin:
        env["SHARDWISE_CORS_ORIGINS"] = ",".join(args.cors_origin)
    if args.session_db:
        env["SHARDWISE_SESSION_DB"] = args.session_db
    if args.llm_timeout is not None:
        if not math.isfinite(args.llm_timeout) or args.llm_timeout <= 0:  # NaN passed `<= 0`
            raise ShardwiseInputError(f"--llm-timeout must be positive and finite (seconds), got {args.llm_timeout}")
        env["SHARDWISE_LLM_TIMEOUT_S"] = str(args.llm_timeout)
    if args.rate_limit:
        env["SHARDWISE_RATE_LIMIT_PER_MINUTE"] = str(args.rate_limit)
    if args.max_body_bytes:
        env["SHARDWISE_MAX_BODY_BYTES"] = str(args.max_body_bytes)
    return env


def require_bindable(host: str, port: int) -> None:
    """A port already in use, or a host that is not this machine's, is a one-line error before anything is said
    to be served: it printed "serving http://…" and then uvicorn's "[Errno 98] … address already in use" (exit 3).
    Bound as uvicorn binds (SO_REUSEADDR), then released for it."""
    import socket

    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ShardwiseInputError(f"--host {host!r} cannot be resolved ({exc.strerror}); give an address of this "
                                  "machine, e.g. 127.0.0.1 or 0.0.0.0") from None
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ShardwiseInputError(f"cannot listen on {host}:{port}: {exc.strerror} (another server may hold the "
                                      "port); pick another with --port") from None


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..web.app import describe_agent
    from ..web.settings import Settings

    if args.port > 65535:
        raise ShardwiseInputError(f"--port must be at most 65535, got {args.port}")
    os.environ.update(settings_env(args))
    settings = Settings.from_env()  # fail here, once, on a bad setting rather than in every worker
    from ..agent.sessions import SessionStore

    SessionStore(settings.session_db)  # an unreachable session database: a clear error now, not at the first chat
    mode, _ = describe_agent(settings)
    require_bindable(args.host, args.port)
    shown_host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    print(f"shardwise: serving http://{shown_host}:{args.port}/  (API docs /docs, chat: {mode}, "
          f"workers: {args.workers})", file=sys.stderr)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("shardwise: listening beyond this machine; there is no login — put it behind your proxy/auth",
              file=sys.stderr)
    uvicorn.run("shardwise.web.app:app_from_env", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level="info", proxy_headers=settings.trust_forwarded_for)
    return 0
