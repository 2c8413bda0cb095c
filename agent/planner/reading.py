"""The reading model: one message becomes a typed request before any tool is called.

    Request
      facts     what the message states about the scenario (entities.py: model, GPUs, nodes x GPUs per
                node, network, sequence, batch, mode, precision, framework) — the context every act shares
      acts      what it asks, in the order asked: recommend, evaluate, compare, what_if, explain, memory,
                export, lookup/list … (the families of intents.py), each with the clause it came from and
                the plans that clause names
      sides     two scenarios to put side by side ("H100 vs H200", "64 or 128 GPUs", "LoRA or QLoRA")
      question  one short question offering two readings, when they would call different tools

How it reads: the message is cut into clauses (clauses.py); a clause that asks nothing ("We fine-tune
Qwen-72B on 16 A100s.") is context; each clause that asks is classified on its own words with the
message's scenario as context, so "What setup, and why not TP=8?" is recommend, then compare. Acts that
repeat the one before ("which is better, and why") are one act. A compare that names one plan compares
it with the plan under discussion: "why not TP=8 PP=2?", "is TP=8 faster than yours?", "and vs the
winner?". With one act, the whole message is classified as one (intents.py), as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..state import ConversationState
from .ambiguity import ask_reading
from .clauses import asks, split_clauses
from .entities import Entities, extract, normalise, own_words
from .intents import Intent, classify, what_if_split, without_injection
from .sides import scenario_sides

GUARDS = ("injection", "greeting", "help", "out_of_domain", "unknown", "clarify", "not_understood")
NOT_AN_ACT = GUARDS + ("list_models", "list_hardware")
# A comparison asked with one plan named: the other side is the plan under discussion.
COMPARE_CUE = re.compile(r"\bwhy\s+not\b|\bvs\.?\b|\bversus\b|\bcompar\w*\b|\b(?:better|faster|slower|cheaper)\s+than\b|"
                         r"\bagainst\b|\binstead\s+of\b|\brather\s+than\b|\bbeats?\b|\bstack\s+up\b|\bover\s+(?:yours|it|that|this|the)\b|"
                         r"\bwhich\s+(?:is|one|wins)\b|\bhow\s+(?:much\s+)?(?:worse|better|slower|faster)\b")
# What, in the user's words, is the plan under discussion (the last recommended, evaluated, what-if
# winner or exported plan): "it", "that", "yours", "the winner", "what you picked", "the recommended one".
DISCUSSED = re.compile(r"\b(?:it|that(?:\s+one|\s+plan)?|this(?:\s+one|\s+plan)?|yours|ours|the\s+winner|your\s+(?:plan|pick|choice|"
                       r"recommendation|layout|setup|answer|one)|what\s+you\s+(?:picked|chose|recommended|suggested|proposed)|"
                       r"the\s+(?:recommended|current|suggested|chosen|best|fastest|top|winning)\s+(?:one|plan|layout|pick))\b")


@dataclass
class Act:
    kind: str  # an Intent family
    clause: str
    entities: Entities
    detail: str | None = None


@dataclass
class Request:
    message: str  # the message as answered (instructions for the assistant removed)
    facts: Entities
    intent: Intent  # the whole message read as one act
    acts: list[Act] = field(default_factory=list)
    sides: tuple[dict, dict] | None = None
    question: tuple[str, list[str]] | None = None  # (what is unclear, the readings offered)


def compares_with_discussed(clause: str, e: Entities, has_plan: bool) -> bool:
    """One plan named, asked about as a comparison, while a plan is on the table."""
    return has_plan and len(e.plans) == 1 and bool(e.plans[0]) and COMPARE_CUE.search(normalise(clause)) is not None


def read(message: str, state: ConversationState) -> Request:
    e = extract(message)
    intent = classify(message, e, state)
    if intent.injected:
        message = without_injection(message)
        e = extract(message)
    request = Request(message=message, facts=e, intent=intent)
    text = normalise(own_words(message))
    if intent.family in GUARDS:
        return request
    request.question = ask_reading(text, e, state)
    if request.question:
        return request
    if intent.family not in ("export", "lookup_model") and not e.plans:
        request.sides = scenario_sides(text)
        if request.sides:
            return request
    acts = _clause_acts(text, e, state)
    if len(acts) < 2:
        acts = [Act(intent.family, message, e, intent.detail)]
    request.acts = acts
    return request


def _clause_acts(text: str, e: Entities, state: ConversationState) -> list[Act]:
    clauses = split_clauses(text)
    if len(clauses) < 2:
        return []
    # The context of every clause: the scenario the message states, over the session's (not a what-if's change).
    context = state.model_copy(update={"scenario": e.scenario_patch().merged_over(state.scenario)}) \
        if e.has_scenario() and what_if_split(text) is None else state
    acts: list[Act] = []
    for clause in clauses:
        if not asks(clause):
            continue
        ce = extract(clause)
        family = classify(clause, ce, context)
        kind = family.family
        if kind in NOT_AN_ACT:
            continue
        has_plan = context.plan is not None or any(a.kind in ("recommend", "what_if", "evaluate", "compare") for a in acts)
        if kind in ("evaluate", "memory") and compares_with_discussed(clause, ce, has_plan):
            kind = "compare"
        if acts and (kind == acts[-1].kind and ce.plans == acts[-1].entities.plans
                     or kind == "why_best" and acts[-1].kind in ("recommend", "compare", "why_best")):
            continue  # the same act again ("which is better, and why")
        acts.append(Act(kind, clause, ce, family.detail))
    return acts if len({a.kind for a in acts}) > 1 or len(acts) > 1 and any(a.entities.plans for a in acts) else []
