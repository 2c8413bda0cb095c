"""The offline planner: chat without an LLM. Deterministic: the same message in the same state
gives the same answer.

It reads the message (entities.py), decides the question family (intents.py), merges what
the user said into the session's scenario, calls the same tools the LLM would, through the
same dispatcher, and answers from the templates in prompts/offline/. Every number it
writes is a field of a tool result, cited by the result's id.
"""

from __future__ import annotations

import json
import re
from typing import Callable, Iterator

from ...prompts.render import render
from ...tools.dispatch import ToolOutcome, dispatch
from ...tools.scenario import Plan, Scenario
from ..events import DeltaEvent, ToolEvent
from ..loop import TurnRecord
from ..state import ConversationState, advance_state
from ...engine import hardware_catalog
from .defaults import unread_defaults
from .entities import Entities, normalise
from .intents import Intent, what_if_split
from .reading import COMPARE_STRONG, REFERS, compares_with_discussed, read
from .understood import understood_line

DEFAULT_FORMAT = {"deepspeed": "deepspeed", "fsdp": "torchtitan", "megatron": "megatron"}
CAPABILITIES = "offline/_capabilities.md.j2"
# The memory asked for beside a concept ("walk me through the mem", "where does the memory go")
# Words that keep the plan under discussion and change one knob: "same layout", "would vpp=3 help", "keep the rest"
SAME_LAYOUT = re.compile(r"\bsame\b|\bhelps?\b|\bkeep\s+(?:the\s+)?(?:rest|everything)\b|\beverything\s+else\b|\bcurrent\s+setup\b")
# The user's own plan: stated as theirs ("we run …", "we're running …", "our config is …"), referred to later
OURS = re.compile(r"\bwe(?:'re|\s+are)?\s+(?:currently\s+)?(?:run|running|use|using|train|training|have|do)\b|\bour\s+(?:current\s+)?"
                  r"(?:setup|plan|config|layout|run|job)\b|\bcurrently\b")
OUR_PLAN = re.compile(r"\bour\s+(?:current\s+|own\s+|existing\s+)?(?:setup|plan|config|layout)\b|\bwhat\s+we\s+(?:run|have|use)\b")
MODE_NAMES = {"full": "full training", "lora": "LoRA", "qlora": "QLoRA"}
MEMORY_WALK = re.compile(r"\b(?:mem|memory|vram|gib|gb|fit|fits)\b")


class _Turn:
    """Collects one turn's tool calls as the same messages an LLM turn would store."""

    def __init__(self, reserve: Callable[[int], list[str]], record: TurnRecord):
        self.reserve, self.record = reserve, record
        self.events: list[ToolEvent] = []

    def call(self, name: str, arguments: dict) -> ToolOutcome:
        rid = self.reserve(1)[0]
        outcome = dispatch(name, arguments, result_id=rid)
        self.record.outcomes.append(outcome)
        call_id = f"call_{rid}"
        self.record.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        self.record.messages.append({"role": "tool", "tool_call_id": call_id, "content": outcome.content()})
        self.events.append(ToolEvent(id=rid, name=name, arguments=outcome.arguments, ok=outcome.ok,
                                     summary=outcome.summary(), errors=outcome.errors,
                                     result=outcome.result.model_dump(mode="json") if outcome.ok else None))
        return outcome


def _scenario_args(s: Scenario) -> dict:
    return s.model_dump(mode="json")


def _plan_with(base: Plan | None, knobs: dict) -> Plan:
    return Plan(**{**(base.model_dump() if base else {}), **knobs})


def run_offline_turn(message: str, state: ConversationState, reserve: Callable[[int], list[str]],
                     record: TurnRecord) -> Iterator[DeltaEvent | ToolEvent]:
    record.messages.append({"role": "user", "content": message})
    request = read(message, state)
    message, e, intent = request.message, request.facts, request.intent
    turn = _Turn(reserve, record)
    if intent.family == "export" and state.plan is not None:
        e.framework = None  # "the DeepSpeed config" names a file format, not a new training setup
    patch = e.scenario_patch(default_gpu=base_gpu(state), base_gpus=base_gpus(state), base_per_node=base_per_node(state),
                             base=state.scenario)
    scenario = patch.merged_over(state.scenario)
    if request.question:
        text = render("offline/ask_reading.md.j2", question=request.question)
    elif request.sides:
        text = _side_by_side(turn, scenario, e, request.sides, state)
    elif len(request.acts) > 1:
        text = _acts_in_order(request, state, scenario, turn)
    else:
        act = request.acts[0] if request.acts else None
        if act is not None and (act.kind in ("evaluate", "memory") and compares_with_discussed(message, e, state.plan is not None)
                                or act.kind == "explain" and state.plan is not None and len(e.plans) == 1 and e.plans[0]
                                and COMPARE_STRONG.search(normalise(message))):
            e.plans = [{}, e.plans[0]]  # one plan named in a comparison: against the plan under discussion
            intent = Intent("compare", None, intent.injected)
        text = answer(intent, e, state, scenario, patch, turn, message)
    used = next(({**o.arguments["scenario"], **{k: v for k, v in (o.arguments.get("change") or {}).items() if v is not None}}
                 for o in record.outcomes
                 if isinstance(o.arguments, dict) and isinstance(o.arguments.get("scenario"), dict)), None)
    defaults = unread_defaults(normalise(message), Scenario(**used)) if used else []
    if defaults:  # a setting the user seemed to give was not read: say which default stood in
        text = render("offline/defaulted.md.j2", defaults=defaults).strip() + "\n\n" + text
    if e.network_unmatched and used:  # a network the catalog lacks: said, not replaced by another in silence
        text = render("offline/network_unmatched.md.j2", written=e.network_unmatched).strip() + "\n\n" + text
    line = understood_line(record.outcomes)
    if line:  # the scenario used, and which of its values were defaults
        text = line + "\n\n" + text
    if intent.injected or intent.detail == "injection":
        text = render("offline/injection_note.md.j2") + "\n" + text
    yield from turn.events
    new_state = advance_state(state.model_copy(update={"scenario": scenario}), record.outcomes)
    if OURS.search(normalise(message)) and len(e.plans) == 1 and len(e.plans[0]) >= 2:
        new_state = new_state.model_copy(update={"user_plan": Plan(**e.plans[0])})  # "we run tp8 pp4 zero1 mb1"
    record.state = new_state
    record.answer += text
    record.messages.append({"role": "assistant", "content": text})
    yield DeltaEvent(text)


def _acts_in_order(request, state: ConversationState, scenario: Scenario, turn: _Turn) -> str:
    """Each act of the message in the order asked, in one answer; an act's plan becomes the plan under
    discussion for the acts after it ("what setup, and why not TP=8?": the winner against TP=8)."""
    shared = request.context.scenario_patch(default_gpu=base_gpu(state), base_gpus=base_gpus(state),
                                            base_per_node=base_per_node(state)).merged_over(state.scenario)
    running = state.model_copy(update={"scenario": shared}) if not shared.missing() else state
    parts = []
    for act in request.acts:
        e = act.entities
        kind, detail = act.kind, act.detail
        if kind in ("evaluate", "memory", "compare") and compares_with_discussed(act.clause, e, running.plan is not None):
            kind, e.plans = "compare", [{}, e.plans[0]]
        if kind == "export" and running.plan is not None:
            e.framework = None
        patch = e.scenario_patch(default_gpu=base_gpu(running), base_gpus=base_gpus(running),
                                 base_per_node=base_per_node(running), base=running.scenario)
        # Each act runs on the scenario so far with what its own clause states ("does that plan fit on 32 H200s?");
        # the model is the whole message's ("a 70B … for llama 3 70b" is one model). A what-if reads its own change.
        own = patch.model_dump(exclude_none=True)
        if request.facts.model or request.facts.params:
            own.pop("model", None), own.pop("params", None)
        act_scenario = (running.scenario or patch.merged_over(state.scenario)) if kind == "what_if" or running.scenario is None \
            else Scenario(**own).merged_over(running.scenario)
        first = len(turn.record.outcomes)
        if kind == "memory" and detail is None and not e.plans and running.plan is None and not act_scenario.missing():
            # "…, and walk me through the memory": the breakdown of the plan the tool recommends, in one call
            out = turn.call("estimate_memory", {"scenario": _scenario_args(act_scenario), "plan": None})
            parts.append(_result_or_error(out, "offline/memory.md.j2").strip())
        else:
            parts.append(answer(Intent(kind, detail), e, running, act_scenario, patch, turn, act.clause).strip())
        running = advance_state(running, turn.record.outcomes[first:])
        if kind == "explain" and len(e.plans) == 1 and len(e.plans[0]) >= 2:
            running = running.model_copy(update={"plan": Plan(**e.plans[0])})  # the user's plan the concept was shown on
    if running.plan is not None and any(a.kind in ("recommend", "what_if") for a in request.acts):
        parts.append(f"**Recommended plan:** `{running.plan.label()}` [{running.plan_result}]")  # the plan on the table now
    return "\n\n---\n\n".join(parts)


def _side_by_side(turn: _Turn, scenario: Scenario, e: Entities, sides: tuple[dict, dict], state: ConversationState) -> str:
    """Two scenarios that differ in one fact, each with its own best plan."""
    results, names = [], []
    for side in sides:
        gpu = side.get("gpu") or scenario.gpu
        if "nodes" in side:
            node = scenario.gpus_per_node or hardware_catalog.get_gpu(gpu).gpus_per_node if gpu else None
            side = {"gpus": side["nodes"] * node} if node else {}
        one = Scenario(**side).merged_over(scenario)
        if one.missing():
            return render("offline/need_more.md.j2", missing=one.missing(), family="recommend",
                          known=one.model_dump(exclude_none=True))
        out = turn.call("recommend_plans", {"scenario": _scenario_args(one), "top_k": 1, "headroom": None,
                                            "constraints": None})
        if not out.ok:
            return render("offline/tool_error.md.j2", outcome=out)
        results.append(out.result)
        value = next(iter(side.values()))
        names.append(f"{side['gpus']} x {hardware_catalog.get_gpu(value).name}" if "gpu" in side and "gpus" in side else
                     hardware_catalog.get_gpu(value).name if "gpu" in side else
                     f"{value} GPUs" if "gpus" in side else MODE_NAMES.get(value, value))
    return render("offline/side_by_side.md.j2", sides=list(zip(names, results)))


def answer(intent: Intent, e: Entities, state: ConversationState, scenario: Scenario, patch: Scenario,
           turn: _Turn, message: str) -> str:
    family = intent.family
    if family in ("injection", "greeting", "help", "out_of_domain", "not_understood"):
        return render(f"offline/{family}.md.j2", scenario=scenario if not scenario.missing() else None,
                      topic=intent.detail)
    if family == "clarify":
        hardware = None
        if e.node_size_of:  # the node size the conflict quotes comes from the catalog: cite it
            out = turn.call("list_hardware", {"kind": "gpus", "name": e.node_size_of})
            hardware = out.result if out.ok else None
        return render("offline/clarify.md.j2", conflicts=e.conflicts, hardware=hardware)
    if family == "unknown":
        hardware = [u for u in e.unknown if u in ("TPUs", "Intel Gaudi", "AWS Trainium", "AWS Inferentia",
                                                  "CPU-only training")]
        models = [u for u in e.unknown if u not in hardware]
        lookups = [turn.call("lookup_model", {"name": name}) for name in models[:2]]
        return render("offline/unknown.md.j2", hardware=hardware,
                      models=[o.result for o in lookups if o.ok])
    if family == "list_models":
        return _result_or_error(turn.call("lookup_model", {"name": None}), "offline/list_models.md.j2")
    if family == "list_hardware":
        return _result_or_error(turn.call("list_hardware", {"kind": None, "name": None}), "offline/list_hardware.md.j2")
    if family == "lookup_model":
        if not e.model:
            return render("offline/not_understood.md.j2", scenario=None)
        return _result_or_error(turn.call("lookup_model", {"name": e.model}), "offline/lookup_model.md.j2")
    if family == "explain":
        args = {"concept": intent.detail, "scenario": None, "plan": None}
        if not scenario.missing():
            knobs = e.plans[0] if e.plans else {}
            same_scenario = state.scenario is not None and scenario == state.scenario
            plan = Plan(**knobs) if knobs else (state.plan if same_scenario else None)
            args.update(scenario=_scenario_args(scenario), plan=plan.model_dump() if plan is not None else None)
        text = _result_or_error(turn.call("explain_concept", args), "offline/explain.md.j2")
        if intent.detail in ("lora", "qlora") and args["scenario"] and MEMORY_WALK.search(normalise(message)):
            # "how come LoRA lets a 7B fit … walk me through the memory": the concept, then the breakdown
            memory = turn.call("estimate_memory", {"scenario": args["scenario"], "plan": args["plan"]})
            if memory.ok:
                text += "\n\n" + render("offline/memory.md.j2", r=memory.result)
        return text

    if family == "what_if":
        split = what_if_split(message)
        if split is not None:  # "<scenario>. what if <change>?": the change is only what follows the question
            before, change = split
            base = before.scenario_patch(default_gpu=base_gpu(state), base_gpus=base_gpus(state),
                                         base_per_node=base_per_node(state)).merged_over(state.scenario)
            delta = change.scenario_patch(default_gpu=base.gpu, base_gpus=base.gpus, base_per_node=base.gpus_per_node,
                                          base=base)
        else:
            base, delta = state.scenario, patch
        if base is not None and not base.missing():
            out = turn.call("what_if", {"scenario": _scenario_args(base), "change": delta.model_dump(mode="json")})
            return _result_or_error(out, "offline/what_if.md.j2")

    invalid = [f"{name} must be a positive whole number, not {value}" for name, value in
               (("gpus", scenario.gpus), ("seq_len", scenario.seq_len), ("global_batch", scenario.global_batch))
               if value is not None and value <= 0]
    if invalid:
        return render("offline/invalid.md.j2", problems=invalid)
    missing = scenario.missing()
    if missing:
        return render("offline/need_more.md.j2", missing=missing, family=family,
                      known=scenario.model_dump(exclude_none=True))

    if family == "memory" and intent.detail == "total_vs_active":
        return _total_vs_active(turn, e, state, scenario)

    if family in ("evaluate", "memory", "compare") and (e.plans or state.plan is not None):
        # the plan under discussion, also when the message moves it to new hardware ("does that plan fit on H200s?");
        # "our current setup" is the plan the user said they run
        base = state.plan if state.scenario is not None and scenario == state.scenario or REFERS.search(normalise(message)) \
            else None
        if state.user_plan is not None and OUR_PLAN.search(normalise(message)):
            base = state.user_plan
        if family == "compare" and len(e.plans) == 2:
            if not e.plans[0] and state.plan is None:
                return render("offline/need_plan.md.j2")
            same_layout = SAME_LAYOUT.search(normalise(message)) is not None
            # "it / that / yours" is the plan under discussion, even where this message restates the setup
            a = (base or state.plan) if not e.plans[0] else _side(turn, scenario, base, e.plans[0], same_layout)
            b = _side(turn, scenario, base, e.plans[1], same_layout)
            out = turn.call("compare_plans", {"scenario": _scenario_args(scenario), "plan_a": a.model_dump(),
                                              "plan_b": b.model_dump()})
            return _result_or_error(out, "offline/compare.md.j2")
        knobs = e.plans[0] if e.plans else {}
        # Two or more knobs describe a plan of their own; one knob modifies the plan under discussion.
        plan = _plan_with(None if len(knobs) >= 2 else base, knobs)
        tool = "estimate_memory" if family == "memory" else "evaluate_plan"
        out = turn.call(tool, {"scenario": _scenario_args(scenario), "plan": plan.model_dump()})
        return _result_or_error(out, f"offline/{'memory' if family == 'memory' else 'evaluate'}.md.j2")

    if family == "export":
        fmt = intent.detail or state.export_format or DEFAULT_FORMAT[scenario.framework or "megatron"]
        knobs = e.plans[0] if len(e.plans) == 1 else {}
        plan = _plan_with(state.plan, knobs) if knobs or state.plan is not None else None
        out = turn.call("export_config", {"scenario": _scenario_args(scenario), "format": fmt,
                                          "plan": plan.model_dump() if plan is not None else None})
        return _result_or_error(out, "offline/export.md.j2")

    constraints = e.plans[0] if e.plans and len(e.plans) == 1 and intent.detail not in ("ignore_plan", "injection") else None
    out = turn.call("recommend_plans", {"scenario": _scenario_args(scenario), "top_k": 3, "headroom": None,
                                        "constraints": constraints})
    if not out.ok:
        return render("offline/tool_error.md.j2", outcome=out)
    if family == "memory" and out.result.best is not None:
        best = Plan.from_strategy(out.result.best.strategy)
        memory = turn.call("estimate_memory", {"scenario": _scenario_args(scenario), "plan": best.model_dump()})
        return _result_or_error(memory, "offline/memory.md.j2")
    template = "offline/why_best.md.j2" if family == "why_best" else "offline/recommend.md.j2"
    text = render(template, r=out.result)
    return text


def _total_vs_active(turn: _Turn, e: Entities, state: ConversationState, scenario: Scenario) -> str:
    """Memory holds every expert, compute touches the active ones: the model's two counts, the memory of
    the plan under discussion (or the recommended one), and, when asked, how EP divides the experts."""
    facts = turn.call("lookup_model", {"name": scenario.model}) if scenario.model else None
    plan = state.plan if state.scenario is not None and scenario == state.scenario else None
    memory = turn.call("estimate_memory", {"scenario": _scenario_args(scenario),
                                           "plan": plan.model_dump() if plan is not None else None})
    if not memory.ok:
        return render("offline/tool_error.md.j2", outcome=memory)
    ep = None
    if e.concept == "expert_parallel":
        label_plan = Plan.from_strategy(memory.result.evaluation.strategy)
        out = turn.call("explain_concept", {"concept": "expert_parallel", "scenario": _scenario_args(scenario),
                                            "plan": label_plan.model_dump()})
        ep = out.result if out.ok else None
    return render("offline/total_vs_active.md.j2", m=facts.result.model if facts is not None and facts.ok else None,
                  facts_id=facts.result.id if facts is not None and facts.ok else None, r=memory.result, ep=ep)


def _matches(plan: Plan, knobs: dict) -> bool:
    return all(getattr(plan, k) == v for k, v in knobs.items())


def base_gpu(state: ConversationState) -> str | None:
    return state.scenario.gpu if state.scenario else None


def base_per_node(state: ConversationState) -> int | None:
    return state.scenario.gpus_per_node if state.scenario else None


def base_gpus(state: ConversationState) -> int | None:
    return state.scenario.gpus if state.scenario else None


def _side(turn: _Turn, scenario: Scenario, base: Plan | None, knobs: dict, same_layout: bool) -> Plan:
    """One side of a comparison: several knobs name a plan of their own; one knob is our plan with it
    ("same layout"), or the plan under discussion when it already has it, or the fastest plan with it."""
    if len(knobs) >= 2:
        return Plan(**knobs)
    if same_layout and base is not None:
        return _plan_with(base, knobs)
    if base is not None and _matches(base, knobs):
        return base
    return _best_with(turn, scenario, base, knobs)


def _best_with(turn: _Turn, scenario: Scenario, base: Plan | None, knobs: dict) -> Plan:
    """The fastest plan with these knobs ("TP=8" means the best TP=8 plan, not ours with TP=8),
    or, when none fits, ours with the knobs set."""
    from ...tools.recommend import Constraints

    pins = {k: v for k, v in knobs.items() if k in Constraints.model_fields}
    if pins:
        out = turn.call("recommend_plans", {"scenario": _scenario_args(scenario), "top_k": 1, "headroom": None,
                                            "constraints": pins})
        if out.ok and out.result.best is not None:
            return _plan_with(Plan.from_strategy(out.result.best.strategy), knobs)
    return _plan_with(base, knobs)


def _result_or_error(outcome: ToolOutcome, template: str) -> str:
    if not outcome.ok:
        return render("offline/tool_error.md.j2", outcome=outcome)
    return render(template, r=outcome.result)
