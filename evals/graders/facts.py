"""Grader 4: the facts an answer must state are there.

Three sources: the case's `keywords` (each a case-insensitive regex, or a list of alternatives
of which one must appear), and the facts the engine's truth implies — the deciding term of a
"why A over B" answer, "does not fit" for a plan that does not, "invalid" for one that breaks
a rule — and the figures the truth says must be stated (the ends of an 80 % interval, the
prediction before calibrating; evals/stated.py).
"""

from __future__ import annotations

import re

from . import TurnContext

NAME = "facts"


def missing(answer: str, groups) -> list[str]:
    out = []
    for group in groups:
        alternatives = [group] if isinstance(group, str) else list(group)
        if not any(re.search(p, answer, re.IGNORECASE) for p in alternatives):
            out.append(" | ".join(alternatives))
    return out


def grade(ctx: TurnContext) -> list[str]:
    expect = ctx.turn.expect
    answer = ctx.reply.answer or ""
    groups = list(expect.keywords)
    stated_gaps: list[str] = []
    if expect.truth_keywords and ctx.truth_kind != "none":
        truth = ctx.truth
        if truth.error is None:
            groups += [list(g) for g in truth.keywords]
            if truth.stated:
                from ..names import catalog_patterns
                from ..stated import missing as not_stated
                stated_gaps = not_stated(answer, truth.stated, ctx.name_patterns or catalog_patterns())
    return [f"missing: {m}" for m in missing(answer, groups)] + stated_gaps
