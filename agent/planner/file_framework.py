"""A config file asked for under another framework than the one the plan on the table was chosen for ("give me a
deepspeed json for that" after a Megatron recommendation). The numbers quoted must be for the framework the file
will run on, so the assistant's plan is re-ranked under it (recommend_plans with that framework), one line says
whether the pick changed, and that plan is exported. A plan the user brought is theirs: it is exported as is, under
the file's framework, not re-ranked. A format that runs any plan (accelerate, a launch script) switches nothing.
The lead's product decision of session 10; docs/agent.md, "Dialogue state"."""

from __future__ import annotations

from ...engine.export import FORMATS, planning_framework
from ...prompts.render import render
from ...tools.scenario import Plan, Scenario
from ..state import ConversationState, advance_state
from .cues import RUNNER_UP
from .entities import normalise
from .turn import Turn, result_or_error, scenario_args

DEFAULT_FRAMEWORK = "megatron"  # tools/scenario.py resolves an unset framework to Megatron-LM
FRAMEWORK_TITLES = {"megatron": "Megatron-LM", "deepspeed": "DeepSpeed", "fsdp": "FSDP2 (torchtitan)",
                    "nanotron": "nanotron"}


def file_framework(fmt: str | None, state: ConversationState) -> str | None:
    """The framework a file in `fmt` runs on, when a plan is on the table and it was chosen under another one;
    None when there is nothing to switch (no plan, the same framework, a format that follows the plan)."""
    if fmt not in FORMATS or state.plan is None:
        return None
    current = (state.scenario.framework if state.scenario is not None else None) or DEFAULT_FRAMEWORK
    target = planning_framework(fmt, current)
    return target if target != current else None


def plan_is_users(state: ConversationState) -> bool:
    """The plan on the table is one the user brought (they run it, or asked to check it), not the assistant's pick."""
    if state.user_plan is None or state.plan is None:
        return False  # the knobs they gave, as the plan on the table has them (the tools fill in the rest)
    return all(getattr(state.plan, knob) == value for knob, value in state.user_plan.model_dump(exclude_none=True).items())


def rerank_for_file(turn: Turn, scenario: Scenario, running: ConversationState, clause: str,
                    fmt: str) -> tuple[str, ConversationState]:
    """The plan re-ranked under the file's framework (`scenario` has it), among the plans the file can express (the
    engine's framework is wider than one file: DeepSpeed's JSON cannot pair its pipeline with TP): one line saying
    whether the pick changed, with the new plan's figures; and the state with that plan on the table, which is the
    one exported. "The runner-up" is the runner-up of the new ranking, set against the old one's."""
    first = len(turn.record.outcomes)
    out = turn.call("recommend_plans", {"scenario": scenario_args(scenario), "top_k": 3, "headroom": None,
                                        "constraints": None, "export_format": fmt})
    after = advance_state(running, turn.record.outcomes[first:])
    if out.ok and out.result.best is None and out.result.nothing_fits is None:  # fitting plans, none the file writes
        return render("offline/file_framework.md.j2", r=out.result, fmt=fmt, none_written=True,
                      framework=FRAMEWORK_TITLES[scenario.framework]), after
    if not out.ok or out.result.best is None:  # nothing fits there: said as a recommendation says it
        return result_or_error(out, "offline/recommend.md.j2"), after
    runner_up = RUNNER_UP.search(normalise(clause)) is not None and out.result.alternatives and running.alternatives
    new = out.result.alternatives[0] if runner_up else out.result.best
    before = running.alternatives[0] if runner_up else running.plan
    was = (running.scenario.framework if running.scenario is not None else None) or DEFAULT_FRAMEWORK
    text = render("offline/file_framework.md.j2", r=out.result, p=new, fmt=fmt, framework=FRAMEWORK_TITLES[scenario.framework],
                  was=FRAMEWORK_TITLES[was], before=before.label(), same=Plan.from_strategy(new.strategy) == before,
                  which="runner-up" if runner_up else "best plan", whose="runner-up" if runner_up else "pick")
    return text, after
