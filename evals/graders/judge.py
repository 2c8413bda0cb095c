"""Grader 5 (optional, never gating): an LLM rates the answer's tone and clarity.

It sees the question, the answer and the tool results, and returns a 1–5 score with one
sentence of reasons. It is reported beside the gating graders and never changes pass/fail:
correctness is decided by graders 1–4 against the engine, not by another model's opinion.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

from . import TurnContext

NAME = "judge"

RUBRIC = """You grade one answer of a distributed-training advisor. Score 1-5 for clarity and tone only
(not arithmetic: numbers are checked elsewhere): 5 = direct, well organised, says what to do and why,
no filler; 3 = correct but hard to follow or padded; 1 = confusing, evasive or rude.
Reply with JSON only: {"score": <1-5>, "reason": "<one sentence>"}"""

# A completion function: (system, user) -> text. The CLI builds one from the configured endpoint.
Complete = Callable[[str, str], str]


@dataclass(frozen=True)
class Verdict:
    score: int | None
    reason: str


def prompt(ctx: TurnContext) -> str:
    results = [{"tool": c.name, "result": c.result} for c in ctx.reply.tool_calls]
    return (f"Question:\n{ctx.turn.user}\n\nTool results:\n{json.dumps(results, default=str)[:6000]}\n\n"
            f"Answer:\n{ctx.reply.answer}")


def parse(text: str) -> Verdict:
    m = re.search(r"\{.*\}", text or "", re.DOTALL)
    try:
        data = json.loads(m.group(0)) if m else {}
        score = int(data.get("score"))
        if not 1 <= score <= 5:
            raise ValueError
        return Verdict(score, str(data.get("reason", ""))[:300])
    except (ValueError, TypeError, json.JSONDecodeError):
        return Verdict(None, f"unreadable judge reply: {(text or '')[:120]!r}")


def judge(ctx: TurnContext, complete: Complete) -> Verdict:
    try:
        return parse(complete(RUBRIC, prompt(ctx)))
    except Exception as exc:  # the judge is advisory: its failure is reported, not raised
        return Verdict(None, f"judge failed: {type(exc).__name__}: {exc}")


def openai_complete(model: str, base_url: str | None = None, api_key: str | None = None) -> Complete:
    """A Complete over any OpenAI-compatible endpoint."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=60.0, max_retries=2)

    def complete(system: str, user: str) -> str:
        reply = client.chat.completions.create(model=model, temperature=0,
                                               messages=[{"role": "system", "content": system},
                                                         {"role": "user", "content": user}])
        return reply.choices[0].message.content or ""

    return complete
