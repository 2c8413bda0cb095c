"""An OpenAI-compatible server's reply, as respx returns it to the real `openai` client in the LLM-path tests
(the shape Ollama's /v1/chat/completions sends: one choice, tool calls with ids, finish_reason as OpenAI's)."""

from __future__ import annotations

import httpx


def completion(content: str | None = None, calls: list[tuple[str, str]] = ()) -> httpx.Response:
    """A chat completion saying `content` and calling each (tool name, JSON arguments) in `calls`."""
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, (n, a) in enumerate(calls)]
    return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 1, "model": "qwen2.5:7b",
                                     "choices": [{"index": 0, "message": message,
                                                  "finish_reason": "tool_calls" if calls else "stop"}]})
