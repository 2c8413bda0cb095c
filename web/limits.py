"""Request-size limit and per-client rate limit, as plain ASGI middleware (they also guard streams).

Both answer with the same JSON error shape as every other error: {"message": …}.
"""

from __future__ import annotations

import json
import math
import threading
import time

from fastapi import HTTPException

# Idle clients are forgotten after this long, so the table of buckets cannot grow without bound.
CLIENT_IDLE_FORGET_S = 600.0
# Sweep the table for idle clients once it holds this many.
CLIENT_TABLE_SWEEP_AT = 10_000


def size_words(n: int) -> str:
    """1048576 -> '1 MiB', 2048 -> '2 KiB', 700 -> '700 bytes'."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


# What to send instead, by endpoint: a body over the limit is almost always the wrong thing pasted whole.
CONFIG_HINT = "a Hugging Face config.json is a few KB — send the model's config, not its weights or tokenizer"
LOG_HINT = ("a training log is read from its printed arguments and throughput lines — send those (the head of the "
            "log and a few dozen iterations), not the whole file")


def size_hint(path: str) -> str:
    return LOG_HINT if path.rstrip("/") == "/api/calibrate" else CONFIG_HINT


class BodyTooLarge(HTTPException):
    """Raised from inside the body stream; FastAPI re-raises HTTPExceptions, so it becomes a 413."""

    def __init__(self, limit: int, seen: int | None = None, path: str = ""):
        size = f"is {seen / 1e6:.1f} MB; the limit is" if seen else "is over the limit of"  # streamed: cut at the limit
        super().__init__(status_code=413, detail=f"request body {size} {size_words(limit)} ({size_hint(path)})")


async def send_json(send, status: int, payload: dict, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                + (headers or [])})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Refuse bodies over `max_bytes`: at once from Content-Length, or while streaming when it is absent or lies."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                return await send_json(send, 400, {"message": "Content-Length header is not a number"})
            if length > self.max_bytes:
                exc = BodyTooLarge(self.max_bytes, length, scope.get("path", ""))
                return await send_json(send, 413, {"message": exc.detail}, [(b"connection", b"close")])
        seen = 0

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes, path=scope.get("path", ""))
            return message

        await self.app(scope, limited_receive, send)


class TokenBucket:
    """`rate` requests per second on average, bursts of up to `burst`; one bucket per client."""

    def __init__(self, per_minute: int, burst: int, clock=time.monotonic):
        self.rate, self.burst, self.clock = per_minute / 60.0, float(burst), clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, last time)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0.0 if the request may go ahead, else the seconds to wait before the next one would."""
        now = self.clock()
        with self._lock:
            if len(self._buckets) >= CLIENT_TABLE_SWEEP_AT:
                self._forget_idle(now)
            tokens, last = self._buckets.get(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _forget_idle(self, now: float) -> None:
        for client, (_, last) in list(self._buckets.items()):
            if now - last > CLIENT_IDLE_FORGET_S:
                del self._buckets[client]

    def __len__(self) -> int:
        return len(self._buckets)


def costs_work(scope) -> bool:
    """Requests that run the engine or the agent: the API, the page's results, a form post, a page with a query."""
    path, method = scope.get("path", ""), scope.get("method", "GET")
    if method == "OPTIONS":
        return False
    return (path.startswith(("/api/", "/ui/")) or method == "POST"
            or (path == "/" and bool(scope.get("query_string"))))


class RateLimit:
    """Per-client limit on requests that do work (the page itself, static files and docs are free).

    Each worker process keeps its own buckets, so with N workers a client may reach up to N times
    the rate; a reverse proxy in front is the place for a global limit.
    """

    def __init__(self, app, per_minute: int, burst: int, trust_forwarded_for: bool = False):
        self.app, self.bucket, self.trust_forwarded_for = app, TokenBucket(per_minute, burst), trust_forwarded_for

    def client_key(self, scope) -> str:
        if self.trust_forwarded_for:
            forwarded = dict(scope.get("headers") or []).get(b"x-forwarded-for", b"").decode("latin-1")
            if forwarded.strip():
                return forwarded.split(",")[0].strip()
        client = scope.get("client")
        return client[0] if client else "unknown"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not costs_work(scope):
            return await self.app(scope, receive, send)
        wait = self.bucket.take(self.client_key(scope))
        if wait > 0:
            retry = max(1, math.ceil(wait))
            return await send_json(send, 429, {"message": f"too many requests from this client; retry in {retry} s "
                                               f"(limit {self.bucket.rate * 60:.0f} per minute)"},
                                   [(b"retry-after", str(retry).encode())])
        await self.app(scope, receive, send)


# The page runs only its own scripts and talks only to its own server: anything injected despite the
# sanitiser could not load code or send data elsewhere. Inline styles stay allowed (SVG charts use them).
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'")


class SecurityHeaders:
    """nosniff everywhere; a Content-Security-Policy on HTML pages (not on /docs, which loads its own assets)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        docs = scope.get("path", "").startswith(("/docs", "/redoc"))

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                headers.append((b"x-content-type-options", b"nosniff"))
                content_type = dict(headers).get(b"content-type", b"")
                if content_type.startswith(b"text/html") and not docs:
                    headers.append((b"content-security-policy", PAGE_CSP.encode()))
                    headers.append((b"referrer-policy", b"same-origin"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
