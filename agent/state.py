"""The conversation's memory between turns: the scenario and the plan under discussion.

Stored as JSON in the session row. Follow-ups ("what if H200s?", "and with LoRA?", "why
not TP=8?") start from it; every tool call that names a scenario updates it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..engine.calibration.profile import CalibrationProfile
from ..tools.scenario import Plan, Scenario


class ConversationState(BaseModel):
    model_config = ConfigDict(extra="ignore")

    scenario: Scenario | None = None
    plan: Plan | None = Field(None, description="the plan under discussion (recommended or evaluated last)")
    plan_result: str | None = Field(None, description="the result id it came from")
    alternatives: list[Plan] = Field(default_factory=list, description="runner-up plans of the last recommendation")
    export_format: str | None = Field(None, description="the config format asked for last")
    recommended: Plan | None = Field(None, description="the last plan recommended (or a what-if's new best): what "
                                                        "'your original pick' means after other plans were discussed")
    user_plan: Plan | None = Field(None, description="the plan the user said they run ('we run tp8 pp4 …'): what "
                                                      "'our setup' / 'our current plan' means")
    profile: CalibrationProfile | None = Field(None, description="the profile fitted to a run the user measured in this "
                                                                 "conversation: applied when they ask ('with our profile')")
    profile_result: str | None = Field(None, description="the calibrate result it came from")
    calibration_offered: bool = Field(False, description="the last turn fitted that profile and offered it: a "
                                                         "'yes' / 'no' next answers the offer (planner/offer_reply.py)")
    profile_in_use: bool = Field(False, description="the user accepted the profile: every later prediction uses it")
    profile_last_answer: bool = Field(False, description="the last answer used that profile for itself only ('with that "
                                                          "profile, …'): 'the error bar on that' next is about its figures, "
                                                          "so it keeps the profile")
    batch_kept_from: Scenario | None = Field(None, description="the scenario before the last what-if that changed the "
                                                               "GPU count and kept the batch: what 'scale the batch with "
                                                               "the GPUs' scales it from")
    pending_measurement: dict | None = Field(None, description="a measured run whose plan the last answer asked for "
                                                               "(kind, value, log): the plan said next calibrates it")

    @classmethod
    def load(cls, data: dict | None) -> "ConversationState":
        try:
            return cls.model_validate(data or {})
        except ValidationError:
            return cls()  # a state written by an older shardwise: start afresh rather than fail

    def dump(self) -> dict:
        return self.model_dump(mode="json", exclude_none=True)


def advance_state(state: ConversationState, outcomes) -> ConversationState:
    """The state after a turn's tool calls: the last scenario used, the last plan produced."""
    from ..tools import registry

    tools = registry()
    for outcome in outcomes:
        if not outcome.ok or not isinstance(outcome.arguments, dict):
            continue
        tool = tools.get(outcome.name)
        if tool is None:
            continue
        update: dict = {}
        if tool.scenario_of is not None:
            scenario = tool.scenario_of(tool.args.model_validate(outcome.arguments))
            if scenario is not None:
                update["scenario"] = scenario
        evaluation = outcome.result.plan_evaluation()
        if evaluation is not None:
            update["plan"] = Plan.from_strategy(evaluation.strategy)
            update["plan_result"] = outcome.id
        alternatives = getattr(outcome.result, "alternatives", None)
        if outcome.name == "recommend_plans":
            update["alternatives"] = [Plan.from_strategy(p.strategy) for p in alternatives or []]
        if outcome.name in ("recommend_plans", "what_if") and evaluation is not None \
                and getattr(outcome.result, "given_plan", None) is None:  # a what-if on the user's plan recommends nothing
            update["recommended"] = Plan.from_strategy(evaluation.strategy)
        if outcome.name == "calibrate_to_measurement":
            # the run the user measured is their plan, and the one under discussion ("how sure are you now?")
            from ..tools.calibrate import measured_setup

            run_plan = measured_setup(tool.args.model_validate(outcome.arguments))[1]
            update.update(profile=outcome.result.profile, profile_result=outcome.id, plan=run_plan,
                          plan_result=outcome.id, user_plan=run_plan, calibration_offered=True, profile_in_use=False)
        if outcome.name == "what_if":
            change = outcome.arguments.get("change") or {}
            kept = change.get("gpus") and not (change.get("global_batch") or change.get("global_batch_tokens"))
            update["batch_kept_from"] = tool.args.model_validate(outcome.arguments).scenario if kept else None
        if outcome.name == "export_config":
            update["export_format"] = outcome.result.format
        state = state.model_copy(update=update)
    return state
