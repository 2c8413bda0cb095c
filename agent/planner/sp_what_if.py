"""A what-if on sequence parallelism ("what if sequence parallel was off?", "turn SP off", "with SP"). SP is a knob of
the plan, not of the scenario the what_if tool changes, so the change is priced on the plan under discussion: that
plan as it is against the same plan with SP switched, by compare_plans (memory, step time and where they move). With
no plan on the table yet, the plan the search recommends. With TP=1 there is nothing for SP to split: said, not
compared (the two plans would be one)."""

from __future__ import annotations

from ...prompts.render import render
from ...tools.scenario import Plan, Scenario
from ..state import ConversationState
from .turn import Turn, plan_with, scenario_args


def sp_what_if(turn: Turn, state: ConversationState, scenario: Scenario, sp_on: bool) -> str:
    plan = state.plan if state.scenario is not None and scenario == state.scenario else None
    if plan is None:
        out = turn.call("recommend_plans", {"scenario": scenario_args(scenario), "top_k": 1, "headroom": None,
                                            "constraints": None})
        if not out.ok or out.result.best is None:  # a refusal, or nothing fits: the recommendation says which
            return render("offline/tool_error.md.j2", outcome=out) if not out.ok else \
                render("offline/recommend.md.j2", r=out.result)
        plan = Plan.from_strategy(out.result.best.strategy)
    current = plan.sequence_parallel is not False  # a Plan's SP left out is on (tools/scenario.py)
    if (plan.tp or 1) == 1:
        out = turn.call("evaluate_plan", {"scenario": scenario_args(scenario), "plan": plan.model_dump()})
        if not out.ok:
            return render("offline/tool_error.md.j2", outcome=out)
        return render("offline/sp_what_if.md.j2", moot=True, p=out.result.plan, rid=out.result.id, on=sp_on)
    already = sp_on == current  # "with SP" on a plan that has it: shown against the same plan without
    switched = plan_with(plan, {"sequence_parallel": not current})
    out = turn.call("compare_plans", {"scenario": scenario_args(scenario), "plan_a": plan.model_dump(),
                                      "plan_b": switched.model_dump()})
    if not out.ok:
        return render("offline/tool_error.md.j2", outcome=out)
    return render("offline/sp_what_if.md.j2", moot=False, r=out.result, on=sp_on, already=already, current=current)
