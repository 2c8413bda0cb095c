"""Side-by-side turns ("best plan on H100 and on H200"), graded one side at a time.

A turn with `sides` names each side (a label an answer would use) and its scenario (the turn's,
with the side's `change`). The answer is split into what it says about each side
(side_text.py); then, per side:

- plan (graders/plan.py): a side expecting `plan: auto` must state, in its own part of the
  answer, the plan the engine recommends for its scenario (or say nothing fits there);
- numbers (graders/numbers.py): a number stated for one side that only another side's tool
  results hold is a figure put under the wrong side. A number no result holds is already the
  numbers grader's failure and is not repeated; numbers on a line naming several sides are
  comparisons and are not attributed;
- tools (graders/tools.py): each tool expectation without `args` needs a call for every side.

A tool call belongs to a side when its arguments do not contradict that side's scenario (a
what-if call carrying both setups belongs to both, and so do its numbers).
"""

from __future__ import annotations

from ..case import Scenario
from ..names import catalog_patterns
from ..numbers import DEGREE_FIELDS, UNIT_FAMILY, backed_by, candidates, degrees_in, extract, values_by_family
from ..side_text import pieces, side_texts
from . import TurnContext
from .plan import plan_failures
from .tools import scenario_mismatches


def side_scenarios(ctx: TurnContext) -> list[Scenario]:
    return ctx.turn.side_scenarios(ctx.scenario)


def labels(ctx: TurnContext) -> list[list[str]]:
    return [side.labels() for side in ctx.turn.sides or []]


def plan_failures_per_side(ctx: TurnContext) -> list[str]:
    sides = ctx.turn.sides or []
    wanted = [i for i, side in enumerate(sides) if side.expect.plan == "auto"]
    if not wanted:
        return []
    texts = side_texts(ctx.reply.answer or "", labels(ctx))
    truths = ctx.side_truths
    failures = []
    for i in wanted:
        side = sides[i]
        if not texts[i].strip():
            failures.append(f"{side.title} side: the answer never names it (label {side.labels()})")
            continue
        failures += [f"{side.title} side: {f}" for f in plan_failures(texts[i], truths[i], side.expect.plan_fields)]
    return failures


def calls_by_side(ctx: TurnContext) -> list[list]:
    """The conversation's tool calls each side may draw on (see the module docstring)."""
    out: list[list] = [[] for _ in ctx.turn.sides or []]
    for call in ctx.all_tool_calls():
        for i, s in enumerate(side_scenarios(ctx)):
            if not scenario_mismatches(call.arguments, s, None, need_all=False):
                out[i].append(call)
    return out


def _pools(calls: list, names) -> tuple[dict[str, list[float]], dict[str, set[float]]]:
    values: dict[str, list[float]] = {"any": []}
    degrees: dict[str, set[float]] = {}
    for call in calls:
        for family, found in values_by_family(call.result, names).items():
            values.setdefault(family, []).extend(found)
        for label, found in degrees_in(call.result, names).items():
            degrees.setdefault(label, set()).update(found)
    return values, degrees


def _backed(q, values: dict[str, list[float]], degrees: dict[str, set[float]], user: list[float]) -> bool:
    if q.unit == "degree" and q.label in set(DEGREE_FIELDS.values()):
        return backed_by(q, degrees.get(q.label, ()))
    return backed_by(q, values.get(UNIT_FAMILY.get(q.unit, "any"), []) + user)


def number_failures_per_side(ctx: TurnContext) -> list[str]:
    sides = ctx.turn.sides or []
    if not sides:
        return []
    names = tuple(ctx.name_patterns or catalog_patterns())
    pools = [_pools(calls, names) for calls in calls_by_side(ctx)]
    user = [abs(c) for text in ctx.user_messages() for q in extract(text, names) for c, _ in candidates(q)]
    user_degrees: dict[str, set[float]] = {}  # "tp8 pp1" in the question backs "TP=8" for either side
    for text in ctx.user_messages():
        for label, found in degrees_in(text, names).items():
            user_degrees.setdefault(label, set()).update(found)
    failures = []
    for piece in pieces(ctx.reply.answer or "", labels(ctx)):
        if piece.shared:
            continue
        values, degrees = pools[piece.side]
        own_degrees = {k: degrees.get(k, set()) | user_degrees.get(k, set()) for k in {*degrees, *user_degrees}}
        for q in extract(piece.text, names, quotes=False):
            if _backed(q, values, own_degrees, user):
                continue
            others = [sides[j].title for j, (v, d) in enumerate(pools) if j != piece.side and _backed(q, v, d, [])]
            if others:
                failures.append(f"{q.text!r} is stated for {sides[piece.side].title} but is "
                                f"{' and '.join(others)}'s figure")
    return failures
