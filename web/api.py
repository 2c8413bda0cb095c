"""REST endpoints: the CLI's commands over HTTP, answering with the same objects `--json` prints."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from ..engine.hardware import GPUSpec, NetworkSpec
from ..engine.explain import Explanation
from ..engine.recommendation import Recommendation
from ..engine.results import Evaluation
from ..engine.whatif import WhatIf
from ..agent.message_limit import too_long_message
from . import engine_calls
from ..engine.calibration.profile import CalibrationProfile
from .calibrate import CalibrateRequest, calibrate as calibrate_run
from .chat import awire_events, error_payload, wire_events
from .offload import PoolOffload
from .schemas import (CatalogModel, ChatRequest, ErrorResponse, EvaluateRequest, ExplainRequest, ExportRequest,
                      ExportResponse, RecommendRequest, WhatIfRequest)
from .sse import EventStreamResponse
from .workpool import PoolBusy

# The agent's deadline is this much shorter than the stream's, so it can still send its own
# error event (with the offline planner's answer) before the stream is cut.
AGENT_DEADLINE_MARGIN_S = 5.0

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "malformed JSON, or input the engine cannot interpret"},
    413: {"model": ErrorResponse, "description": "request body over the size limit"},
    415: {"model": ErrorResponse, "description": "body not sent as JSON (Content-Type: application/json)"},
    422: {"model": ErrorResponse, "description": "unknown field or value out of range"},
    429: {"model": ErrorResponse, "description": "too many requests from this client"},
    503: {"model": ErrorResponse, "description": "the engine's worker pool is full; retry after Retry-After seconds"},
}

router = APIRouter(prefix="/api", responses=ERRORS)


@router.post("/evaluate", response_model=Evaluation, summary="Evaluate one plan (shardwise evaluate --json)")
async def evaluate(body: EvaluateRequest, request: Request) -> Evaluation:
    return await request.app.state.work_pool.run(engine_calls.evaluate, body)


@router.post("/recommend", response_model=Recommendation,
             summary="Search every valid plan and rank them (shardwise recommend --json)")
async def recommend(body: RecommendRequest, request: Request):
    return await request.app.state.work_pool.run(engine_calls.recommend, body)


@router.post("/explain", response_model=Explanation,
             summary="Compare two plans term by term and explain the winner (shardwise explain --json)")
async def explain(body: ExplainRequest, request: Request) -> Explanation:
    return await request.app.state.work_pool.run(engine_calls.explain, body)


@router.post("/what-if", response_model=WhatIf,
             summary="The recommendation before and after changing inputs, and why (shardwise what-if --json)")
async def what_if(body: WhatIfRequest, request: Request) -> WhatIf:
    return await request.app.state.work_pool.run(engine_calls.what_if, body)


@router.post("/export", response_model=ExportResponse, summary="A framework config for one plan (shardwise export)")
async def export(body: ExportRequest, request: Request) -> ExportResponse:
    return await request.app.state.work_pool.run(engine_calls.export, body)


@router.post("/calibrate", response_model=CalibrationProfile,
             summary="Fit a calibration profile to one measured run or a training log (shardwise calibrate --json)")
async def calibrate(body: CalibrateRequest, request: Request) -> CalibrationProfile:
    return await request.app.state.work_pool.run(calibrate_run, body)


@router.get("/models", response_model=list[CatalogModel], summary="The model catalog (shardwise models --json)")
def models() -> list[dict[str, Any]]:
    return engine_calls.list_models()


@router.get("/gpus", response_model=list[GPUSpec], summary="The GPU catalog (shardwise gpus --json)")
def gpus() -> list[GPUSpec]:
    return engine_calls.list_gpus()


@router.get("/networks", response_model=list[NetworkSpec], summary="Scale-out networks")
def networks() -> list[NetworkSpec]:
    return engine_calls.list_networks()


@router.get("/health", summary="Liveness, the chat mode, how many answers are streaming and the engine pool's load")
def health(request: Request) -> dict[str, Any]:
    state = request.app.state
    pool = state.work_pool
    return {"status": "ok", "chat_mode": state.chat_mode, "active_chats": state.active_chats.count,
            "engine_pool": {"threads": pool.workers, "running": pool.running, "queued": pool.queued,
                            "refused": pool.refused}}


@router.post("/chat", summary="Ask the advisor; the answer streams as server-sent events", status_code=200,
             responses={200: {"content": {"text/event-stream": {}}, "description": (
                 "events: session {session_id, mode}; delta {text}; tool {name, arguments, summary}; "
                 "configs {configs: {format: text}, plan?, scenario?}; done {answer, html, session_id}; error {message, kind, "
                 "offline: the offline planner's answer when the LLM failed, or null}")}})
def chat(body: ChatRequest, request: Request):
    state = request.app.state
    limit = state.max_message_chars
    if len(body.message) > limit:
        raise HTTPException(413, too_long_message(len(body.message), limit))
    if not body.message.strip():
        raise HTTPException(422, "message is empty: ask about a model and a cluster, e.g. '70B on 64 H100s'")
    service = state.chat_service()
    busy = {"errors": [], "message": "the advisor is answering as many questions as it can; retry in a few seconds"}
    if not state.active_chats.try_acquire():
        return JSONResponse(busy, status_code=503, headers={"retry-after": "5"})
    settings, pool = state.settings, state.work_pool
    if hasattr(service, "astream"):
        offload = PoolOffload(pool)
        if getattr(service, "mode", "llm") == "offline":
            # The whole answer is engine work: admitted like a REST call, its place in the queue held from now.
            try:
                pool.reserve()
            except PoolBusy as exc:
                state.active_chats.release()
                return JSONResponse({**busy, "message": f"{busy['message']} ({exc})"}, status_code=503,
                                    headers={"retry-after": str(exc.retry_after_s)})
            offload = PoolOffload(pool, reserved=True)
        # The agent's own deadline ends first, so a failing LLM still gets its offline answer out.
        agent_deadline = max(1.0, settings.chat_deadline_s - AGENT_DEADLINE_MARGIN_S)
        return EventStreamResponse(lambda: awire_events(service, body.message, body.session_id, body.scenario,
                                                        body.plan, offload=offload, deadline_s=agent_deadline,
                                                        profile=body.profile),
                                   state.active_chats, settings.chat_deadline_s, error_payload, on_close=offload.release)
    return EventStreamResponse(lambda: wire_events(service, body.message, body.session_id, body.scenario, body.plan,
                                                   body.profile),
                               state.active_chats, settings.chat_deadline_s, error_payload)
