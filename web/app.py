"""The FastAPI application: `create_app()` builds one; `shardwise serve` runs it under uvicorn.

Concurrency: the event loop streams every chat answer (an LLM-backed answer waits on the network
without holding a thread); CPU-bound engine work — REST searches, the page's results, tool calls,
the offline planner — runs in `app.state.work_pool`, a few threads with a short queue, and a
request that would wait too long for it gets 503 with Retry-After.

Middleware order, outermost first: CORS (so even refusals carry the allow-list headers the
embedding page needs to read them), the per-client rate limit, then the body-size limit.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles
from fastapi.responses import HTMLResponse

from .. import __version__
from .api import router as api_router
from .docs_page import docs_page, redoc_page
from .errors import install_error_handlers
from .limits import BodySizeLimit, RateLimit, SecurityHeaders
from .pages import router as page_router
from .settings import Settings
from .sse import ActiveStreams
from .workpool import WorkPool

HERE = Path(__file__).parent
log = logging.getLogger("shardwise.web")


def create_app(settings: Settings | None = None, chat_service: Any = None) -> FastAPI:
    """`chat_service`: anything with `stream(message, session_id)`; by default the agent, built on first use."""
    settings = settings or Settings.from_env()
    app = FastAPI(title="shardwise", version=__version__, docs_url=None, redoc_url=None,  # below: readable offline
                  description="The fastest distributed-training plan that fits. REST bodies use the CLI's flag "
                              "names in snake_case; responses are the objects `shardwise … --json` prints. "
                              "Errors are `{\"message\": …, \"errors\": [{field, message}]}`.")
    app.state.settings = settings
    app.state.active_chats = ActiveStreams(settings.max_chat_streams)
    app.state.work_pool = WorkPool(settings.work_threads, settings.work_queue, settings.work_max_wait_s)
    app.state.chat_service = _lazy(chat_service, settings)
    app.state.chat_mode = "offline planner"
    app.state.max_message_chars = settings.max_message_chars
    if chat_service is None:
        app.state.chat_mode, limit = describe_agent(settings)
        app.state.max_message_chars = min(settings.max_message_chars, limit)
    app.add_api_route("/docs", lambda: docs_page(app), include_in_schema=False, response_class=HTMLResponse)
    app.add_api_route("/redoc", lambda: redoc_page(app), include_in_schema=False, response_class=HTMLResponse)
    install_error_handlers(app)
    app.include_router(api_router)
    app.include_router(page_router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(RateLimit, per_minute=settings.rate_limit_per_minute, burst=settings.rate_limit_burst,
                       trust_forwarded_for=settings.trust_forwarded_for)
    app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                       allow_headers=["content-type"], max_age=600)
    return app


def _lazy(service: Any, settings: Settings) -> Callable[[], Any]:
    """The chat service, built once per process the first time someone chats."""
    lock, built = threading.Lock(), [service]

    def get() -> Any:
        with lock:
            if built[0] is None:
                built[0] = build_chat_service(settings)
            return built[0]
    return get


def agent_config(settings: Settings):
    from ..agent.config import load_config

    overrides: dict[str, Any] = {"session_db": settings.session_db}
    if settings.llm_timeout_s is not None:
        overrides["request_timeout_s"] = settings.llm_timeout_s
    return load_config(**overrides)


def describe_agent(settings: Settings) -> tuple[str, int]:
    """("offline planner" | "LLM: <model>", the agent's message limit) — shown in the page, never the key."""
    try:
        config = agent_config(settings)
    except Exception as exc:  # noqa: BLE001 - a bad agent config must not stop the REST API
        log.warning("agent configuration unusable: %s", exc)
        return "unavailable", settings.max_message_chars
    mode = f"LLM: {config.model}" if config.llm_enabled else "offline planner"
    return mode, config.max_message_chars


def build_chat_service(settings: Settings) -> Any:
    from ..agent.service import ChatService

    return ChatService(agent_config(settings))


def app_from_env() -> FastAPI:
    """uvicorn's factory for `shardwise serve --workers N`: each worker reads the same environment."""
    return create_app()
