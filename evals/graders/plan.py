"""Grader 2: the plan the answer recommends is the engine's.

The engine's recommendation for the turn's scenario is computed now (truth.py). The answer's
plan is the one it presents as the recommendation (plan_text.py). It must give TP, the ZeRO
stage and the micro-batch, and every other degree the engine sets above 1 (PP, VPP, CP, EP,
ETP); a degree left unsaid is 1, as people and the engine's own labels write plans (also when a case lists
`plan_fields`: a listed PP or CP is required only where the engine sets it above 1). DP need
not be said (it is the GPU count over TP·PP·CP) but, like everything stated, must be right.
Every degree it states — required or not — must equal the engine's. When the engine finds
no plan that fits, the answer must say so instead.

A side-by-side turn (`sides`) is graded per side instead: the plan stated for each side, read
from the part of the answer that names it (side_text.py), against the engine's recommendation
for that side's scenario (per_side.py).
"""

from __future__ import annotations

import re

from ..plan_text import stated_plan
from ..truth import NOT_FIT_WORDS
from . import TurnContext

NAME = "plan"

BASE_FIELDS = ("tp", "zero", "micro_batch")
IMPLICIT_ONE = ("pp", "vpp", "cp", "ep", "etp")  # unsaid = 1


def required_fields(truth_plan: dict, override: list[str] | None) -> list[str]:
    if override is not None:
        return list(override)
    return list(BASE_FIELDS) + [name for name in IMPLICIT_ONE if truth_plan.get(name, 1) > 1]


def says_nothing_fits(answer: str) -> bool:
    return any(re.search(w, answer, re.IGNORECASE) for w in NOT_FIT_WORDS)


def plan_failures(answer: str, truth, plan_fields: list[str] | None = None) -> list[str]:
    """Why the plan `answer` recommends is not the engine's (`truth`: a recommend Truth)."""
    if truth.error:
        return [f"the engine rejected the case's scenario: {truth.error}"]
    if truth.plan is None:
        return [] if says_nothing_fits(answer) else ["the engine finds no plan that fits, and the answer does not say so"]
    want = truth.plan
    got = stated_plan(answer)
    label = " ".join(f"{k}={v}" for k, v in want.items())
    if got is None:
        return [f"no plan stated; the engine recommends {label}"]
    failures = []
    for name in required_fields(want, plan_fields):
        if name not in got and not (name in IMPLICIT_ONE and want[name] == 1):  # an override keeps "unsaid = 1"
            failures.append(f"{name} not stated (engine: {want[name]})")
    for name, value in got.items():
        if name in want and str(value).lower() != str(want[name]).lower():
            failures.append(f"{name}={value}, engine recommends {name}={want[name]}")
    return failures


def grade(ctx: TurnContext) -> list[str]:
    if ctx.turn.sides:
        from .per_side import plan_failures_per_side
        return plan_failures_per_side(ctx)
    if ctx.turn.expect.plan is None:
        return []
    return plan_failures(ctx.reply.answer or "", ctx.truth, ctx.turn.expect.plan_fields)
