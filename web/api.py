"""REST endpoints: the CLI's commands over HTTP, answering with the same objects `--json` prints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from ..engine.hardware import GPUSpec, NetworkSpec
from ..engine.recommendation import Recommendation
from ..engine.results import Evaluation
from . import engine_calls
from .chat import error_payload, wire_events
from .schemas import (CatalogModel, ChatRequest, ErrorResponse, EvaluateRequest, ExportRequest, ExportResponse,
                      RecommendRequest)
from .sse import EventStreamResponse

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "malformed JSON, or input the engine cannot interpret"},
    413: {"model": ErrorResponse, "description": "request body over the size limit"},
    422: {"model": ErrorResponse, "description": "unknown field or value out of range"},
    429: {"model": ErrorResponse, "description": "too many requests from this client"},
}

router = APIRouter(prefix="/api", responses=ERRORS)


@router.post("/evaluate", response_model=Evaluation, summary="Evaluate one plan (shardwise evaluate --json)")
def evaluate(body: EvaluateRequest) -> Evaluation:
    return engine_calls.evaluate(body)


@router.post("/recommend", response_model=Recommendation,
             summary="Search every valid plan and rank them (shardwise recommend --json)")
def recommend(body: RecommendRequest):
    return engine_calls.recommend(body)


@router.post("/export", response_model=ExportResponse, summary="A framework config for one plan (shardwise export)")
def export(body: ExportRequest) -> ExportResponse:
    return engine_calls.export(body)


@router.get("/models", response_model=list[CatalogModel], summary="The model catalog (shardwise models --json)")
def models() -> list[dict[str, Any]]:
    return engine_calls.list_models()


@router.get("/gpus", response_model=list[GPUSpec], summary="The GPU catalog (shardwise gpus --json)")
def gpus() -> list[GPUSpec]:
    return engine_calls.list_gpus()


@router.get("/networks", response_model=list[NetworkSpec], summary="Scale-out networks")
def networks() -> list[NetworkSpec]:
    return engine_calls.list_networks()


@router.get("/health", summary="Liveness, the chat mode and how many answers are streaming")
def health(request: Request) -> dict[str, Any]:
    state = request.app.state
    return {"status": "ok", "chat_mode": state.chat_mode, "active_chats": state.active_chats.count}


@router.post("/chat", summary="Ask the advisor; the answer streams as server-sent events", status_code=200,
             response_class=EventStreamResponse,
             responses={200: {"content": {"text/event-stream": {}}, "description": (
                 "events: session {session_id, mode}; delta {text}; tool {name, arguments, summary}; "
                 "configs {configs: {format: text}, plan?, scenario?}; done {answer, html, session_id}; error {message, kind}")}})
def chat(body: ChatRequest, request: Request):
    state = request.app.state
    limit = state.max_message_chars
    if len(body.message) > limit:
        raise HTTPException(413, f"message is {len(body.message):,} characters; the limit is {limit:,} — ask one question at a time")
    if not body.message.strip():
        raise HTTPException(422, "message is empty: ask about a model and a cluster, e.g. '70B on 64 H100s'")
    service = state.chat_service()
    if not state.active_chats.try_acquire():
        return JSONResponse({"message": "the advisor is answering as many questions as it can; retry in a few seconds",
                             "errors": []}, status_code=503, headers={"retry-after": "5"})
    return EventStreamResponse(lambda: wire_events(service, body.message, body.session_id, body.scenario,
                                                           body.profile), state.active_chats,
                               state.settings.chat_deadline_s, error_payload)
