"""A stateless, slow, OpenAI-compatible chat endpoint on loopback, for benchmarks/bench_serve_load.py.

Every POST /v1/chat/completions waits `--delay` seconds (as a remote LLM does), then answers from
the request alone: while the conversation since the last user message has no tool result, it calls
`recommend_plans` for Llama-3.1-8B on the GPU count named in that message; once a tool result is
there, it writes a short answer citing the result's id. Streams (SSE) or not, as asked.

    python benchmarks/fake_llm.py --port 8700 --delay 1.5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

DELAY_S = 1.5
GPUS = re.compile(r"\b(\d+)\s*(?:x\s*)?H100", re.IGNORECASE)


def scenario_for(question: str) -> dict:
    match = GPUS.search(question)
    return {"model": "llama-3.1-8b", "params": None, "gpu": "h100", "gpus": int(match.group(1)) if match else 8,
            "gpus_per_node": None, "network": None, "seq_len": 4096, "global_batch": 256,
            "global_batch_tokens": None, "mode": None, "lora_rank": None, "precision": None, "framework": None}


def reply_for(messages: list[dict]) -> dict:
    """{"content": ...} or {"tool_calls": [...]}: what the model says next."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    tool_results = [m for m in messages[last_user:] if m.get("role") == "tool"]
    if not tool_results:
        arguments = {"scenario": scenario_for(str(messages[last_user].get("content") or "")), "top_k": 3,
                     "headroom": None, "constraints": None}
        return {"tool_calls": [{"id": f"call_{time.monotonic_ns()}", "type": "function",
                                "function": {"name": "recommend_plans", "arguments": json.dumps(arguments)}}]}
    try:
        result_id = json.loads(tool_results[-1]["content"]).get("id", "R1")
    except (ValueError, AttributeError):
        result_id = "R1"
    return {"content": f"The recommended plan is the first one in [{result_id}]; its configs are attached."}


def chunk(delta: dict, finish: str | None = None) -> str:
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n"


async def completions(request: Request):
    body = await request.json()
    await asyncio.sleep(request.app.state.delay_s)
    reply = reply_for(body.get("messages") or [])
    finish = "tool_calls" if "tool_calls" in reply else "stop"
    if not body.get("stream"):
        return JSONResponse({"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                             "choices": [{"index": 0, "finish_reason": finish,
                                          "message": {"role": "assistant", "content": reply.get("content"),
                                                      **({"tool_calls": reply["tool_calls"]} if "tool_calls" in reply else {})}}]})

    def frames():
        if "tool_calls" in reply:
            yield chunk({"role": "assistant", "tool_calls": [{"index": 0, **reply["tool_calls"][0]}]})
        else:
            words = reply["content"].split(" ")
            for i, word in enumerate(words):
                yield chunk({"content": word + (" " if i < len(words) - 1 else "")})
        yield chunk({}, finish)
        yield "data: [DONE]\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream")


def build(delay_s: float = DELAY_S) -> Starlette:
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.delay_s = delay_s
    return app


if __name__ == "__main__":
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=DELAY_S)
    args = parser.parse_args()
    uvicorn.run(build(args.delay), host="127.0.0.1", port=args.port, log_level="warning", backlog=2048)
