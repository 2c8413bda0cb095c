"""Grader 3: every number the answer states comes from the conversation's tool results.

The pool is every number in every tool result of the conversation so far (numeric fields and
the quantities their strings state), plus the numbers in the user's own messages (repeating
"64 GPUs" back is not inventing it). A short quotation in the answer (an example question it
suggests, such as "70B on 64 H100s?") is not a claim and is not checked. Each quantity the answer states must equal one of them
within tolerance, after unit conversion (numbers.py). One unbacked number fails the turn.
"""

from __future__ import annotations

from ..names import catalog_patterns
from ..numbers import DEGREE_FIELDS, Quantity, backed_by, candidates, degrees_in, extract, numbers_in
from . import TurnContext

NAME = "numbers"
CONTEXT_CHARS = 30  # shown around an unbacked number in the failure message


def pool(ctx: TurnContext) -> list[float]:
    names = ctx.name_patterns or catalog_patterns()
    values: list[float] = []
    for call in ctx.all_tool_calls():
        values += numbers_in(call.result, names)
    for text in ctx.user_messages():
        for q in extract(text, names):
            values += [abs(c) for c, _ in candidates(q)]
    return values


def degree_pool(ctx: TurnContext) -> dict[str, set[float]]:
    """Plan degrees by label: from result fields named after them, labels in result strings, and
    degrees the user wrote ("tp2 pp1" in the question backs "TP=2" in the answer)."""
    names = ctx.name_patterns or catalog_patterns()
    out: dict[str, set[float]] = {}
    sources = [c.result for c in ctx.all_tool_calls()] + ctx.user_messages()
    for source in sources:
        for label, values in degrees_in(source, names).items():
            out.setdefault(label, set()).update(values)
    return out


def unbacked(ctx: TurnContext) -> list[Quantity]:
    names = ctx.name_patterns or catalog_patterns()
    values = pool(ctx)
    degrees = degree_pool(ctx)
    known_labels = set(DEGREE_FIELDS.values())
    out = []
    for q in extract(ctx.reply.answer or "", names, quotes=False):
        if q.unit == "degree" and q.label in known_labels:
            ok = backed_by(q, degrees.get(q.label, ()))
        else:
            ok = backed_by(q, values)
        if not ok:
            out.append(q)
    return out


def grade(ctx: TurnContext) -> list[str]:
    if not ctx.turn.expect.numbers:
        return []
    answer = ctx.reply.answer or ""
    failures = []
    for q in unbacked(ctx):
        a, b = max(0, q.start - CONTEXT_CHARS), q.start + len(q.text) + CONTEXT_CHARS
        snippet = answer[a:b].replace("\n", " ")
        failures.append(f"unbacked number {q.text!r} in '…{snippet}…'")
    return failures
