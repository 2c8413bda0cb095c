"""The reading model: one message becomes a typed request before any tool is called.

    Request
      facts     what the message states about the scenario (entities.py: model, GPUs, nodes x GPUs per
                node, network, sequence, batch, mode, precision, framework, and the setup options of setup_words.py:
                dispatcher, EP overlap, CUDA graphs, packed documents) — the context every act shares
      acts      what it asks, in the order asked: recommend, evaluate, compare, what_if, explain, memory,
                export, lookup/list (the families of intents.py), each with the clause it came from and
                the plans that clause names or points at
      sides     scenarios to put side by side ("H100 vs H200", "64 or 128 GPUs", "LoRA or QLoRA")
      question  one short question offering two readings, when they would call different tools

How it reads: the message is cut into clauses (clauses.py); a clause that asks nothing ("We fine-tune
Qwen-72B on 16 A100s.") is context for the next; each clause that asks is classified on its own words
(intents.py) with the scenario stated so far, then adjusted by what it points at (cues.py and the
dialogue state): one plan named in a comparison is compared with the plan under discussion ("why not
TP=8 PP=2?"), an alternative asked for is an unconstrained recommendation ("what would you pick
instead"), "the runner-up" / "your original pick" are plans of the state, a metric after a named plan is
that plan's evaluation. Acts that repeat the one before are one act. With one act, the whole message is
classified as one, as before; acts read from what they point at ("derived") stand on their own.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from ..state import ConversationState
from .ambiguity import ask_reading
from .clauses import asks, split_clauses
from .cues import (ALTERNATIVE, BEST_ASKED, CHANGE_SAID, CLAIMED_BEST, COMPARE_CUE, COMPARE_STRONG, DISCUSSED, EVALUATE_IT, EXPLAIN_CUE, FIT, GAP, METRIC,
                   ORIGINAL, OURS_REF, PLAN_TOO, REFERS, RUNNER_UP, YOUR_PLAN, YOURS_REF)
from .entities import Entities, extract, normalise, own_words
from .file_framework import file_framework, plan_is_users
from .intents import (CHECK_CLAIM, restates_only, EXPLAIN_STRONG, OUT_OF_SCOPE, QUESTION, RECOMMEND_CUE, Intent, classify, what_if_split,
                      without_injection)
from .measured import MeasuredRun, measured_run, pending_run
from .measured_plans import MeasuredPlans, measured_plans
from .names import find_export_formats, framework_said
from .sides import scenario_sides

GUARDS = ("injection", "greeting", "help", "out_of_domain", "unknown", "clarify", "not_understood")
NOT_AN_ACT = GUARDS
@dataclass
class Act:
    kind: str  # an Intent family
    clause: str
    entities: Entities
    detail: str | None = None
    derived: bool = False  # read from what the clause points at (the runner-up, an alternative), not its family
    against_best: bool = False  # a comparison the planner adds after "what would you pick instead?" (not asked as one)


@dataclass
class Request:
    message: str  # the message as answered (instructions for the assistant removed)
    facts: Entities
    intent: Intent  # the whole message read as one act
    acts: list[Act] = field(default_factory=list)
    sides: tuple[dict, ...] | None = None
    question: tuple[str, list[str]] | None = None  # (what is unclear, the readings offered)
    context: Entities | None = None  # with several acts: the facts they share (a what-if's change left out)
    set_aside: bool = False  # part of the message is outside what shardwise does; the acts answer the rest
    measured: MeasuredRun | None = None  # the user's own run, measured or logged: calibrated on (calibrating.py)
    measured_plans: MeasuredPlans | None = None  # the run's plan, and a plan compared with it (measured_plans.py)



def compares_with_discussed(clause: str, e: Entities, has_plan: bool) -> bool:
    """One plan named, asked about as a comparison, while a plan is on the table."""
    text = normalise(clause)
    return has_plan and len(e.plans) == 1 and bool(e.plans[0]) and (
        COMPARE_CUE.search(text) is not None
        or DISCUSSED.search(text) is not None and re.search(r"\b(?:faster|slower|better|worse|quicker)\b", text) is not None)


def read(message: str, state: ConversationState) -> Request:
    e = extract(message)
    intent = classify(message, e, state)
    if intent.injected:
        message = without_injection(message)
        e = extract(message)
    request = Request(message=message, facts=e, intent=intent)
    text = normalise(own_words(message))
    if intent.family in ("injection", "greeting", "help"):
        return request
    run = measured_run(message)
    if run is None and state.pending_measurement and len(e.plans) == 1 and e.plans[0]:
        run = pending_run(state.pending_measurement)  # "that was TP=4 PP=4 ZeRO-1": the plan asked for, of that run
    if run is not None:
        # a measured figure or a pasted log is the question, whatever else its words look like (a log's
        # "configuration" is not an export, its argument names are not a topic outside shardwise)
        request.measured, request.acts = run, [Act("calibrate", message, e)]  # request.intent: the words' own reading
        # the run is the plan its own sentence names, not the first plan written; another plan named is compared
        request.measured_plans = measured_plans(text, run, state)
        if request.measured_plans is not None:
            e.plans = [request.measured_plans.run]
        return request
    request.question = ask_reading(text, e, state)
    if request.question:
        return request
    if intent.family in GUARDS:
        if intent.family == "out_of_domain" and intent.detail is None:
            # "what's a good learning rate, and what plan for 8 H100s?": the part shardwise answers, answered
            acts = _clause_acts(text, e, Intent("recommend"), state, allow_one=True)
            if acts and not e.scenario_patch().merged_over(state.scenario).missing():
                # only a topic shardwise does not model is set aside; words it has no rule for are not a topic
                request.acts, request.context, request.set_aside = acts, extract(text), OUT_OF_SCOPE.search(text) is not None
                return request
        if intent.family in ("out_of_domain", "not_understood") and intent.detail is None and state.plan is not None:
            # words only the dialogue explains: "compare that with your original pick", "and the runner-up?"
            request.acts = [a for a in _clause_acts(text, e, intent, state) if a.derived]
            request.context = extract(text) if request.acts else None
        return request
    if intent.family not in ("export", "lookup_model") and not e.plans:
        request.sides = scenario_sides(text)
        if request.sides:
            return request
    acts = _clause_acts(text, e, intent, state)
    if len(acts) < 2 and not any(a.derived for a in acts):
        acts = [Act(intent.family, message, e, intent.detail)]
    acts = [one for act in acts for one in _each_format(act)]  # "both: megatron and deepspeed configs"
    if len(acts) == 1 and acts[0].kind in ("evaluate", "memory") and _claims_best(text, acts[0].entities):
        # "someone told me TP=16 is optimal - is it?": the plan's own numbers, the best plan, then the two compared
        named = acts[0].entities.plans[0]
        acts = [Act("evaluate", acts[0].clause, acts[0].entities, "claimed_best", derived=True),
                Act("recommend", acts[0].clause, _with_plans(acts[0].entities, []), None),
                Act("compare", acts[0].clause, _with_plans(acts[0].entities, [{}, named]), "claimed_best",
                    against_best=True)]
    for act in acts:  # "evaluate it at 16k instead": that plan under the change, not the change's best plan
        if act.kind == "what_if" and state.plan is not None and EVALUATE_IT.search(normalise(act.clause)):
            act.kind = "evaluate"
    if state.plan is None and acts[0].kind in ("explain", "evaluate", "memory", "compare", "export") \
            and not any(acts[0].entities.plans) and (YOUR_PLAN.search(normalise(acts[0].clause))
                                                     or acts[0].kind == "export" and PLAN_TOO.search(text)):
        # "explain why you chose that PP degree", "need the plan + megatron args for it": the plan they point at
        # is the recommendation, made first
        acts.insert(0, Act("recommend", acts[0].clause, _with_plans(acts[0].entities, []), None))
    elif all(a.kind == "export" for a in acts) and plan_is_users(state) and not any(acts[0].entities.plans) \
            and BEST_ASKED.search(normalise(acts[0].clause)):
        # "megatron args for the best plan" after calibrating to their own run: the plan on the table is theirs, not
        # the best one; the best plan (under the profile, when it is on) is recommended first and that one exported
        acts.insert(0, Act("recommend", acts[0].clause, _with_plans(acts[0].entities, []), None))
    new_framework = state.plan is not None and acts[0].kind == "export" and e.framework is not None \
        and framework_said(text) and (state.scenario is None or e.framework != state.scenario.framework)
    if new_framework and (PLAN_TOO.search(text) or not plan_is_users(state)):
        # "we use deepspeed, not megatron: the plan there + the ds_config": the plan on the table was chosen for
        # another framework; the best plan under the one said is recommended first, and that plan is exported
        acts.insert(0, Act("recommend", acts[0].clause, _with_plans(acts[0].entities, []), None))
    switches = acts[0].kind == "export" and file_framework(acts[0].detail or acts[0].entities.export_format, state)
    if len(acts) > 1 or acts[0].derived or switches:  # a file under another framework: acts_in_order re-ranks first
        shared = text
        for act in acts:  # a what-if's change, and a follow-up's file format, are not the shared setup
            if act.kind == "what_if" or act.kind == "export" and state.plan is not None and not new_framework:
                shared = shared.replace(act.clause, " ").replace(normalise(act.clause), " ")  # a whole message's act: as written
        request.context = extract(shared)
    request.acts = acts
    return request


# Families that answer the same kind of question; the whole message's reading must share one with its acts.
CLASS = {"recommend": "plan", "why_best": "plan", "evaluate": "layout", "memory": "layout", "compare": "layout",
         "what_if": "what_if", "explain": "explain", "export": "export", "lookup_model": "facts", "list_models": "facts",
         "list_hardware": "facts"}
CATCH_ALL = ("recommend", "why_best", "evaluate")  # what a whole message reads as when its requests are mixed


def _claims_best(text: str, e: Entities) -> bool:
    """One plan named and said to be the best, asked about ("… is optimal - is it?", "is tp8 the fastest?")."""
    return len(e.plans) == 1 and bool(e.plans[0]) and CLAIMED_BEST.search(text) is not None \
        and (QUESTION.search(text) is not None or CHECK_CLAIM.search(text) is not None)


def _each_format(act: Act) -> list[Act]:
    formats = find_export_formats(normalise(act.clause)) if act.kind == "export" else []
    if len(formats) < 2:
        return [act]
    return [Act("export", act.clause, act.entities, fmt, derived=True) for fmt in formats]


def _with_plans(e: Entities, plans: list[dict]) -> Entities:
    """The same facts with other plans (a recommendation takes no constraints from the plan it is compared with)."""
    return dataclasses.replace(e, plans=plans)


def _clause_acts(text: str, e: Entities, intent: Intent, state: ConversationState, allow_one: bool = False) -> list[Act]:
    """The acts of a message with several requests, in order; [] when it asks one thing."""
    clauses = split_clauses(text)
    context = state  # each clause is read with the scenario stated so far (a what-if's change left out)
    acts: list[Act] = []
    carried = ""  # a clause that asks nothing ("64 gpus: tp4 pp2 or tp8 pp1.") is context for the next one
    for clause in clauses:
        if not asks(clause) and not (state.scenario is not None and CHANGE_SAID.search(clause) and classify(
                clause, extract(clause), context).family == "what_if"):  # "ok now with 128 gpus, and export …"
            carried += clause + " "
            continue
        clause, carried = carried + clause, ""
        ce = extract(clause)
        ce.export_format = ce.export_format or e.export_format  # "… deepspeed: …? and gimme the json"
        reading = classify(clause, ce, context)
        kind = reading.family
        if kind == "what_if":
            split = what_if_split(clause)  # "<setup> -> if we double gbs …": the setup before the change is context
            if split is not None and split[0].has_scenario():
                context = context.model_copy(update={"scenario": split[0].scenario_patch().merged_over(context.scenario)})
            if context.scenario is None or context.scenario.missing():
                # nothing to change yet: "and for llama 8b on 16 h100, which would you run" states the setup
                kind = next((k for k in [classify(clause, ce, state).family] if k not in ("what_if",) + NOT_AN_ACT), "recommend")
            elif restates_only(ce, context.scenario):
                # "what would you run instead on the same 64 gpus?": a setting said as it already is changes nothing;
                # the question is about the plan for this setup
                kind = next((k for k in [classify(clause, ce, state).family] if k not in ("what_if",) + NOT_AN_ACT), "recommend")
        has_plan = context.plan is not None or any(a.kind in ("recommend", "what_if", "evaluate", "compare")
                                                   or a.entities.plans for a in acts)
        if kind != "what_if" and ce.has_scenario():  # what this clause states is the setup from here on
            context = context.model_copy(update={"scenario": ce.scenario_patch().merged_over(context.scenario)})
        if ALTERNATIVE.search(clause) and kind not in ("export", "what_if") and not (kind == "explain" and EXPLAIN_STRONG.search(clause)):
            # the best plan, unconstrained; a plan this clause names is compared with it afterwards
            named = [p for p in ce.plans if p] or [a.entities.plans[0] for a in acts[-1:] if COMPARE_CUE.search(clause)
                                                   and len(a.entities.plans) == 1 and len(a.entities.plans[0]) >= 2]
            acts.append(Act("recommend", clause, _with_plans(ce, []), None))
            if named and kind != "compare":
                acts.append(Act("compare", clause, _with_plans(ce, [{}, named[0]]), None, against_best=True))
            elif kind == "compare":
                acts.append(Act("compare", clause, ce, None))
            continue
        if kind == "explain" and RECOMMEND_CUE.search(clause) and not EXPLAIN_STRONG.search(clause):
            kind = "recommend"  # "whats the best setup, mb/recompute etc": the knobs are what to choose, not concepts
        if state.recommended is not None and state.plan != state.recommended and ORIGINAL.search(clause) \
                and kind not in ("export", "what_if", "explain"):
            # "now compare that with your original pick": the plan on the table against the recommendation
            original = state.recommended.model_dump(exclude_none=True)
            acts.append(Act("compare", clause, _with_plans(ce, [{}, original]), None, derived=True))
            continue
        if state.user_plan is not None and OURS_REF.search(clause) and (COMPARE_CUE.search(clause) or GAP.search(clause)) \
                and not ce.plans \
                and kind not in ("export", "what_if", "explain"):
            # "how much faster is yours than ours?": the plan on the table (yours: the recommendation) against theirs
            yours = state.recommended if YOURS_REF.search(clause) and state.recommended is not None else state.plan
            if yours is not None and yours != state.user_plan:
                acts.append(Act("compare", clause, _with_plans(ce, [yours.model_dump(exclude_none=True),
                                                                    state.user_plan.model_dump(exclude_none=True)]),
                                None, derived=True))
                continue
        if state.alternatives and RUNNER_UP.search(clause) and kind not in ("export", "what_if", "explain"):
            # "and the runner-up? why is it slower?": the plan under discussion against the next best
            runner_up = state.alternatives[0].model_dump(exclude_none=True)
            acts.append(Act("compare", clause, _with_plans(ce, [{}, runner_up]), None, derived=True))
            continue
        if kind == "recommend" and has_plan and REFERS.search(clause):
            kind = "memory" if FIT.search(clause) else "evaluate"  # "does that plan (same degrees) fit on 32 H200s?"
        named_before = next((a.entities.plans[0] for a in reversed(acts) if len(a.entities.plans) == 1 and a.entities.plans[0]), None)
        asks_metric = METRIC.search(clause) and kind not in ("what_if", "export") and not (
            kind == "explain" and EXPLAIN_CUE.search(clause))  # "tell me its MFU", not "what is MFU"
        if not named_before and has_plan and acts and not ce.plans and asks_metric and DISCUSSED.search(clause):
            kind = "evaluate"  # "export that and tell me its MFU": the numbers of the plan on the table
        elif named_before and not ce.plans and asks_metric:
            # "does it fit, and what MFU should we expect?": the numbers of the plan just named
            if acts[-1].kind in ("evaluate", "memory") and acts[-1].entities.plans == [named_before]:
                acts[-1].kind = "evaluate"
                continue
            kind, ce.plans = "evaluate", [named_before]
        if acts and acts[-1].detail == "moe_dispatcher" and not (ce.model or ce.params or ce.gpu or ce.gpus or ce.plans):
            continue  # "which frameworks have deepep? megatron obviously, but deepspeed? nanotron?": the same question
        if kind in NOT_AN_ACT or kind == "explain" and not EXPLAIN_CUE.search(clause) and reading.detail != "moe_dispatcher":
            continue  # a concept named in passing ("do we want EP?") is not a request to explain it; "do X and Y even
            # have deepep?" is one by its own words (names.DISPATCHER_OFFERED)
        if kind in ("evaluate", "memory") and compares_with_discussed(clause, ce, has_plan) or \
                kind == "explain" and has_plan and len(ce.plans) == 1 and COMPARE_STRONG.search(clause):
            kind = "compare"
        if acts and (kind == "why_best" and acts[-1].kind in ("recommend", "compare", "why_best")
                     or kind == acts[-1].kind and ce.plans == acts[-1].entities.plans and not ce.has_scenario()):
            continue  # "which is better, and why", "I want to train X. How should I shard it": the same act again
        if acts and acts[-1].kind == "export" and kind in ("what_if", "recommend") and not ce.plans \
                and (ce.export_format or ce.framework) and not (ce.model or ce.gpu or ce.gpus):
            kind = "export"  # "the torchtitan config, and also the deepspeed one": another file
            reading = Intent("export", ce.export_format or {"fsdp": "torchtitan"}.get(ce.framework, ce.framework))
        if acts and kind == "recommend" and acts[-1].kind == "what_if" and not ce.has_scenario() and not ce.plans:
            continue  # "what if we switch to 100GbE, and does the plan change?": the what-if answers it
        if acts and kind in ("memory", "evaluate") and acts[-1].kind == "compare" and not ce.plans:
            continue  # "compare zero 1 and zero 3, then tell me which uses less memory": the comparison shows it
        acts.append(Act(kind, clause, ce, reading.detail))
    # An act on plans a later comparison covers ("do we need tp8? … tp4 pp2 or tp8 pp1, which is faster") is that comparison;
    # not a question about the user's plan ("does tp4 pp2 fit, what MFU? what would you run instead?"), answered first in
    # its own right before the best plan it is then compared with.
    acts = [a for i, a in enumerate(acts) if not (a.kind in ("evaluate", "compare") and any(
        b.kind == "compare" and not (b.against_best and a.kind == "evaluate") and a.entities.plans and all(any(p.items() <= q.items() for q in b.entities.plans)
                                                         for p in a.entities.plans if p) for b in acts[i + 1:]))]
    for act in acts:  # "explain interleaving? what does vpp=2 buy me, tp8 pp4": the concept on the plan named
        if act.kind == "explain" and not act.entities.plans and len(e.plans) == 1 and len(e.plans[0]) >= 2:
            act.entities.plans = list(e.plans)
    # the concept shown on the plan covers its evaluation, unless the evaluation's own clause asks for the plan's
    # numbers ("what MFU should we expect from this, and how is MFU counted for MoE?")
    acts = [a for a in acts if not (a.kind == "evaluate" and not (METRIC.search(a.clause) or FIT.search(a.clause)) and any(
        b.kind == "explain" and b.entities.plans == a.entities.plans for b in acts))]
    kinds = [a.kind for a in acts]
    if any(a.derived for a in acts) or allow_one and acts:
        return acts
    if len({(a.kind, a.detail if a.kind == "export" else None) for a in acts}) < 2 or intent.family not in CATCH_ALL and CLASS.get(intent.family) not in {CLASS.get(k) for k in kinds}:
        return []  # one request, or a reading the whole message does not support: read it as one
    return acts
