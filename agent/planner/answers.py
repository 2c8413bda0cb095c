"""One act answered: the family's tool calls (through Turn) and its template. Used for a message with one
request and, in order, for each act of a message with several (acts.py)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from ...prompts.render import render
from ...tools.scenario import Plan, Scenario
from ..state import ConversationState
from .entities import Entities, normalise
from .intents import Intent, what_if_split
from .measured import measured_peak
from .target_rate import target_rate, verdict
from .names import UNSUPPORTED_HARDWARE, contrasted_concepts
from .catalog_asked import catalogs_asked
from .cues import REFERS, RUNNER_UP
from .sp_what_if import sp_what_if
from .turn import Turn, base_gpu, base_gpus, base_per_node, plan_with, result_or_error, scenario_args

DEFAULT_FORMAT = {"deepspeed": "deepspeed", "fsdp": "torchtitan", "megatron": "megatron", "nanotron": "nanotron"}
# The memory asked for beside a concept ("walk me through the mem", "where does the memory go")
MEMORY_WALK = re.compile(r"\b(?:mem|memory|vram|gib|gb|fit|fits)\b")
# Words that keep the plan under discussion and change one knob: "same layout", "would vpp=3 help", "keep the rest"
SAME_LAYOUT = re.compile(r"\bsame\b|\bhelps?\b|\bfits?\b|\bkeep\s+(?:the\s+)?(?:rest|everything)\b|\beverything\s+else\b|\bcurrent\s+setup\b")
# "our current setup", "what we run": the plan the user said they run (ConversationState.user_plan)
OUR_PLAN = re.compile(r"\bour\s+(?:current\s+|own\s+|existing\s+)?(?:setup|plan|config|layout)\b|\bwhat\s+we\s+(?:run|have|use)\b")


# Scenario options the what_if tool's `changed_inputs` does not list (it names the scenario facts it reports): the
# answer's heading names them from the call's own change, so "with grad reduce in bf16?" is not "What if ?"
UNLISTED_OPTIONS = {"grad_reduce_dtype": "fp32", "fp8_param_gather": False, "recompute_modules": None}


def _options_changed(base: Scenario, delta: Scenario) -> list[SimpleNamespace]:
    out = []
    for field, default in UNLISTED_OPTIONS.items():
        before, after = getattr(base, field), getattr(delta, field)
        before = default if before is None else before
        if after is not None and after != before:
            if field == "recompute_modules":  # a list: said as names, None as the engine's default set
                before, after = (", ".join(v) if v is not None else "the model's default" for v in (before, after))
            out.append(SimpleNamespace(field=field, before=before, after=after))
    return out


def answer(intent: Intent, e: Entities, state: ConversationState, scenario: Scenario, patch: Scenario,
           turn: Turn, message: str) -> str:
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
        hardware = [u for u in e.unknown if u in UNSUPPORTED_HARDWARE.values()]
        models = [u for u in e.unknown if u not in hardware]
        lookups = [turn.call("lookup_model", {"name": name}) for name in models[:2]]
        gpus_asked, models_asked = catalogs_asked(normalise(message))  # "if not, which gpus and models do you support"
        known = turn.call("list_hardware", {"kind": "gpus", "name": None}) \
            if hardware or e.unlisted_gpu or gpus_asked else None  # name what is known
        catalog = turn.call("lookup_model", {"name": None}) if models_asked else None
        text = render("offline/unknown.md.j2", hardware=hardware, models=[o.result for o in lookups if o.ok],
                      known=known.result if known is not None and known.ok else None, unlisted=e.unlisted_gpu)
        if known is not None and gpus_asked and not (hardware or e.unlisted_gpu):  # asked, and not yet listed
            text += "\n\n" + result_or_error(known, "offline/list_hardware.md.j2")
        if catalog is not None:
            text += "\n\n" + result_or_error(catalog, "offline/list_models.md.j2")
        return text
    if family == "list_models":
        gpus = None
        if intent.detail == "with_hardware":  # "which gpus + which models": the GPUs first, as asked
            gpus = result_or_error(turn.call("list_hardware", {"kind": "gpus", "name": None}), "offline/list_hardware.md.j2")
        models = result_or_error(turn.call("lookup_model", {"name": None}), "offline/list_models.md.j2")
        return models if gpus is None else gpus + "\n\n" + models
    if family == "list_hardware":
        return result_or_error(turn.call("list_hardware", {"kind": None, "name": None}), "offline/list_hardware.md.j2")
    if family == "lookup_model":
        if not e.model:
            return render("offline/not_understood.md.j2", scenario=None)
        return result_or_error(turn.call("lookup_model", {"name": e.model}), "offline/lookup_model.md.j2")
    if family == "explain":
        args = {"concept": intent.detail, "scenario": None, "plan": None}
        if not scenario.missing():
            knobs = e.plans[0] if e.plans else {}
            same_scenario = state.scenario is not None and scenario == state.scenario
            on_table = state.plan if same_scenario else None  # one knob named: the plan on the table with it
            plan = plan_with(on_table if len(knobs) == 1 else None, knobs) if knobs else on_table
            args.update(scenario=scenario_args(scenario), plan=plan.model_dump() if plan is not None else None)
        contrasted = contrasted_concepts(normalise(message))
        concepts = contrasted if intent.detail in contrasted else [intent.detail]  # "SP vs CP": both, as written
        outs = [turn.call("explain_concept", {**args, "concept": concept}) for concept in concepts]
        if not all(o.ok for o in outs):
            return result_or_error(next(o for o in outs if not o.ok), "offline/explain.md.j2")
        text = "\n\n".join(render("offline/explain.md.j2", r=o.result, invite=i == len(outs) - 1) for i, o in enumerate(outs))
        if intent.detail in ("lora", "qlora") and args["scenario"] and MEMORY_WALK.search(normalise(message)):
            # "how come LoRA lets a 7B fit … walk me through the memory": the concept, then the breakdown
            memory = turn.call("estimate_memory", {"scenario": args["scenario"], "plan": args["plan"]})
            if memory.ok:
                text += "\n\n" + render("offline/memory.md.j2", r=memory.result)
        return text

    if family == "what_if" and intent.detail == "sequence_parallel" and not scenario.missing():
        return sp_what_if(turn, state, scenario, e.plans[0]["sequence_parallel"])
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
            arguments = {"scenario": scenario_args(base), "change": delta.model_dump(mode="json")}
            yours = _users_plan_for(state, delta)
            if yours is None and delta.recompute_modules is not None and state.plan is not None:
                # "selective recompute of core_attn only": the modules matter only to a plan that recomputes
                # selectively, so the plan on the table is priced with it, before and after
                yours = plan_with(state.plan, {**(e.plans[0] if len(e.plans) == 1 else {}), "recompute": "selective"})
            if yours is not None:  # "would DeepEP help here?" after they gave their plan: that plan, with and without
                arguments["plan"] = yours.model_dump()
            out = turn.call("what_if", arguments)
            if not out.ok:
                return render("offline/tool_error.md.j2", outcome=out)
            return render("offline/what_if.md.j2", r=out.result, more=_options_changed(base, delta))

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
            if intent.detail == "claimed_best" and a == b and state.plan_result:
                # the plan said to be the best is the one the search ranks first: nothing to compare it with
                return render("offline/claimed_best_confirmed.md.j2", plan=a, result_id=state.plan_result)
            out = turn.call("compare_plans", {"scenario": scenario_args(scenario), "plan_a": a.model_dump(),
                                              "plan_b": b.model_dump()})
            return result_or_error(out, "offline/compare.md.j2")
        knobs = e.plans[0] if e.plans else {}
        # Two or more knobs describe a plan of their own; one knob modifies the plan under discussion.
        # one knob changes the plan under discussion, also under a changed setup of the same model
        # ("would qlora let us use mb 4?"); several knobs name a plan of their own
        same_model = state.scenario is not None and (state.scenario.model, state.scenario.params) == (scenario.model, scenario.params)
        plan = plan_with(None if len(knobs) >= 2 else base or (state.plan if same_model else None), knobs)
        read_as = None
        if intent.detail == "claimed_best" and len(knobs) == 1 and base is None:
            # "TP=16 is optimal": the claim is about the best TP=16 can do, as the comparison after it reads it
            plan, read_as = _best_with(turn, scenario, None, knobs), knobs
        said_peak = measured_peak(message)  # "max allocated was 66.9 GiB": set against the predicted band
        peak = round(said_peak.gib, 3) if said_peak is not None else None  # in the unit written, converted once
        tool = "estimate_memory" if family == "memory" or peak is not None else "evaluate_plan"
        arguments = {"scenario": scenario_args(scenario), "plan": plan.model_dump()}
        out = turn.call(tool, {**arguments, "measured_peak_gib": peak} if peak is not None else arguments)
        if intent.detail == "uncertainty" and tool == "evaluate_plan":
            return result_or_error(out, "offline/uncertainty.md.j2") if not out.ok else \
                render("offline/uncertainty.md.j2", p=out.result.plan, rid=out.result.id)
        text = result_or_error(out, f"offline/{'memory' if tool == 'estimate_memory' else 'evaluate'}.md.j2")
        if said_peak is not None and said_peak.written and out.ok:  # "81.5 GB = 75.9 GiB": the unit read, said once
            text = render("offline/peak_unit.md.j2", written=said_peak.written,
                          framework_label=said_peak.framework_label).strip() + "\n\n" + text
        if read_as and out.ok:
            knob, value = next(iter(read_as.items()))
            text = render("offline/claimed_best.md.j2", knob=knob, value=value).strip() + "\n\n" + text
        return text

    if family == "export":
        fmt = intent.detail or state.export_format or DEFAULT_FORMAT[scenario.framework or "megatron"]
        knobs = e.plans[0] if len(e.plans) == 1 else {}
        on_table = state.alternatives[0] if state.alternatives and RUNNER_UP.search(normalise(message)) else state.plan
        plan = plan_with(on_table, knobs) if knobs or on_table is not None else None
        out = turn.call("export_config", {"scenario": scenario_args(scenario), "format": fmt,
                                          "plan": plan.model_dump() if plan is not None else None})
        return result_or_error(out, "offline/export.md.j2")

    constraints = e.plans[0] if e.plans and len(e.plans) == 1 and intent.detail not in ("ignore_plan", "injection") else None
    sp_asked = (constraints or {}).get("sequence_parallel")
    if constraints is not None:  # SP is no constraint of the search (tools/recommend.py Constraints): every plan is tried both ways
        constraints = {k: v for k, v in constraints.items() if k != "sequence_parallel"} or None
    cost = {"train_tokens": e.train_tokens, "price_per_gpu_hour": e.price_per_gpu_hour}  # "200B tokens @ $2.5/gpu-hr"
    out = turn.call("recommend_plans", {"scenario": scenario_args(scenario), "top_k": 3, "headroom": None,
                                        "constraints": constraints, **{k: v for k, v in cost.items() if v is not None}})
    if not out.ok:
        return render("offline/tool_error.md.j2", outcome=out)
    if family == "memory" and out.result.best is not None:
        best = Plan.from_strategy(out.result.best.strategy)
        memory = turn.call("estimate_memory", {"scenario": scenario_args(scenario), "plan": best.model_dump()})
        return result_or_error(memory, "offline/memory.md.j2")
    template = "offline/why_best.md.j2" if family == "why_best" else "offline/recommend.md.j2"
    text = render(template, r=out.result)
    if sp_asked is not None:  # "best plan without SP?": said, not dropped in silence
        text = render("offline/sp_not_pinned.md.j2", on=sp_asked).strip() + "\n\n" + text
    target = target_rate(message)
    if target is not None and out.result.best is not None and out.result.best.tokens_per_s:
        # "we need ~12 samples/sec, can we hit that?": answered first, yes or no, from the best plan and its band
        best, facts = out.result.best, out.result.scenario
        text = render("offline/target_rate.md.j2", t=target, p=best, s=facts, rid=out.result.id,
                      status=verdict(target, best, facts.seq_len, facts.gpus)).strip() + "\n\n" + text
    if intent.detail == "uncertainty" and out.result.best is not None:  # "…, and how sure are you?"
        text = render("offline/uncertainty.md.j2", p=out.result.best, rid=out.result.id).strip() + "\n\n" + text
    return text


def _total_vs_active(turn: Turn, e: Entities, state: ConversationState, scenario: Scenario) -> str:
    """Memory holds every expert, compute touches the active ones: the model's two counts, the memory of
    the plan under discussion (or the recommended one), and, when asked, how EP divides the experts."""
    facts = turn.call("lookup_model", {"name": scenario.model}) if scenario.model else None
    plan = state.plan if state.scenario is not None and scenario == state.scenario else None
    memory = turn.call("estimate_memory", {"scenario": scenario_args(scenario),
                                           "plan": plan.model_dump() if plan is not None else None})
    if not memory.ok:
        return render("offline/tool_error.md.j2", outcome=memory)
    ep = None
    if e.concept == "expert_parallel":
        label_plan = Plan.from_strategy(memory.result.evaluation.strategy)
        out = turn.call("explain_concept", {"concept": "expert_parallel", "scenario": scenario_args(scenario),
                                            "plan": label_plan.model_dump()})
        ep = out.result if out.ok else None
    return render("offline/total_vs_active.md.j2", m=facts.result.model if facts is not None and facts.ok else None,
                  facts_id=facts.result.id if facts is not None and facts.ok else None, r=memory.result, ep=ep)


def _matches(plan: Plan, knobs: dict) -> bool:
    return all(getattr(plan, k) == v for k, v in knobs.items())


def _side(turn: Turn, scenario: Scenario, base: Plan | None, knobs: dict, same_layout: bool) -> Plan:
    """One side of a comparison: several knobs name a plan of their own; one knob is our plan with it
    ("same layout"), or the plan under discussion when it already has it, or the fastest plan with it."""
    if len(knobs) >= 2:
        return Plan(**knobs)
    if same_layout and base is not None:
        return plan_with(base, knobs)
    if base is not None and _matches(base, knobs):
        return base
    return _best_with(turn, scenario, base, knobs)


def _best_with(turn: Turn, scenario: Scenario, base: Plan | None, knobs: dict) -> Plan:
    """The fastest plan with these knobs ("TP=8" means the best TP=8 plan, not ours with TP=8),
    or, when none fits, ours with the knobs set."""
    from ...tools.recommend import Constraints

    pins = {k: v for k, v in knobs.items() if k in Constraints.model_fields}
    if pins:
        out = turn.call("recommend_plans", {"scenario": scenario_args(scenario), "top_k": 1, "headroom": None,
                                            "constraints": pins})
        if out.ok and out.result.best is not None:
            return plan_with(Plan.from_strategy(out.result.best.strategy), knobs)
    return plan_with(base, knobs)


# A change of how the experts' tokens travel, or of the precision the matmuls run in, keeps the plan's layout: a
# what-if on it is about the plan the user runs (or named, or calibrated to) when they gave one, priced beside the
# search's best ("what if fp8?" after they evaluated their plan: their plan in FP8, and the best FP8 plan).
PLAN_KEEPING_CHANGES = {"moe_dispatcher", "moe_a2a_overlap", "precision"}


def _users_plan_for(state: ConversationState, delta: Scenario) -> Plan | None:
    """The user's own plan, for a dispatcher or precision what-if: the plan on the table when it is theirs (all its knobs), else
    the knobs they gave; None when they gave none or the change is not one that keeps a plan's layout."""
    from .file_framework import plan_is_users

    changed = set(delta.model_dump(exclude_none=True))
    if state.user_plan is None or not changed or not changed <= PLAN_KEEPING_CHANGES:
        return None
    return state.plan if plan_is_users(state) else state.user_plan
