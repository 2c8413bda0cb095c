"""Grader 3: every number the answer states comes from the conversation's tool results.

The pool is every number in every tool result of the conversation so far (numeric fields and
the quantities their strings state; a tool's refusal is what it returned, so the figures and plan labels its
message states count too: "the measured plan TP2 PP3 ZeRO3 mb1 … 2·1·3 = 6 does not divide 16 GPUs"), plus
the numbers in the user's own messages (repeating
"64 GPUs" back is not inventing it). A short quotation in the answer (an example question it
suggests, such as "70B on 64 H100s?") is not a claim and is not checked. Each quantity the answer states must equal one of them
within tolerance, after unit conversion (numbers.py) — and a quantity with a unit must equal a
value of its kind: GiB a memory field, ms a time field, % a percentage or fraction, tokens/s a
throughput, TP=8 a TP degree. One unbacked number fails the turn. In a side-by-side turn a
number stated for one side must not be only another side's figure (per_side.py).
"""

from __future__ import annotations

from ..names import catalog_patterns
from ..numbers import DEGREE_FIELDS, UNIT_FAMILY, Quantity, backed_by, candidates, degrees_in, extract, values_by_family
from . import TurnContext

NAME = "numbers"
CONTEXT_CHARS = 30  # shown around an unbacked number in the failure message


def pool(ctx: TurnContext) -> dict[str, list[float]]:
    """Tool-result numbers by family (numbers.values_by_family); the user's numbers count for every family."""
    names = ctx.name_patterns or catalog_patterns()
    values: dict[str, list[float]] = {"any": []}
    for call in ctx.all_tool_calls():
        for family, found in values_by_family([call.result, call.errors], names).items():
            values.setdefault(family, []).extend(found)
    user = [abs(c) for text in ctx.user_messages() for q in extract(text, names) for c, _ in candidates(q)]
    return {family: found + user for family, found in values.items()} | {"user": user}


def degree_pool(ctx: TurnContext) -> dict[str, set[float]]:
    """Plan degrees by label: from result fields named after them, labels in result strings, and
    degrees the user wrote ("tp2 pp1" in the question backs "TP=2" in the answer)."""
    names = ctx.name_patterns or catalog_patterns()
    out: dict[str, set[float]] = {}
    sources = [[c.result, c.errors] for c in ctx.all_tool_calls()] + ctx.user_messages()
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
        else:  # a quantity with a unit must equal a value of its kind ("61.7 GiB" a memory value)
            family = UNIT_FAMILY.get(q.unit, "any")
            ok = backed_by(q, values.get(family, values["user"]))
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
    if ctx.turn.sides:  # side by side: each side's figures come from its own results (per_side.py)
        from .per_side import number_failures_per_side
        failures += number_failures_per_side(ctx)
    return failures
