"""History sent to the model: the newest whole turns that fit a token budget.

A turn (one user message and every assistant and tool message answering it) is kept or
dropped whole, so a tool result never loses the call it answers. Per-message overhead is
the chat format's framing, as OpenAI's cookbook counts it ("How to count tokens with
tiktoken": 3 tokens per message for gpt-3.5-turbo-0613 / gpt-4 and later).
"""

from __future__ import annotations

from .tokens import count_tokens

TOKENS_PER_MESSAGE = 3


def message_tokens(message: dict, encoding: str) -> int:
    n = TOKENS_PER_MESSAGE + count_tokens(str(message.get("content") or ""), encoding)
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        n += count_tokens(fn.get("name", "") + (fn.get("arguments") or ""), encoding)
    return n


def trim_turns(turns: list[list[dict]], budget: int, encoding: str) -> list[dict]:
    """The most recent turns whose messages add up to at most `budget` tokens, oldest first."""
    kept: list[list[dict]] = []
    used = 0
    for turn in reversed(turns):
        cost = sum(message_tokens(m, encoding) for m in turn)
        if used + cost > budget:
            break
        kept.append(turn)
        used += cost
    return [m for turn in reversed(kept) for m in turn]
