"""What small local models do to tool calls, repaired where the intent is unambiguous.

Seen from Ollama / llama.cpp / vLLM with 7–14B models:
- the call written as JSON in the message text instead of `tool_calls` (bare, in a ```json
  fence, in Hermes/Qwen `<tool_call>` tags, after Llama's `<|python_tag|>`), with the
  arguments under "arguments" or "parameters";
- the arguments as a JSON string inside a string ("\\"{\\\\\\"scenario\\\\\\": …}\\""), or an
  object argument given as a JSON string ({"scenario": "{\\"model\\": …}"});
- numbers as strings ("64", "1,024", "8k" for a sequence length);
- a tool name a little off ("recommend", "functions.recommend_plans", "RecommendPlans");
- a required object left out: the scenario fields written at the top level instead of under
  "scenario" (or "change", "plan"), or no scenario at all on a follow-up.

`repair_reply` returns the reply with what it could repair, or one retry message for the model
when the text plainly tries to call a tool that cannot be read. What is still wrong after repair
(an unknown tool, a missing plan) is left to the dispatcher, whose error lists the fix.
The loop calls it once per model reply (agent/loop.py).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, get_args, get_origin

from .model import ModelReply, ToolCall
from .count_words import count_value

RETRY = ("[shardwise] Your reply wrote a tool call as text, and it could not be read{why}. Call the tool through "
         "the tool-calling interface (not in your message), with its arguments as one JSON object, e.g. "
         "recommend_plans with {{\"scenario\": {{\"model\": \"llama-3.1-70b\", \"gpu\": \"h100-sxm\", \"gpus\": 64}}}}.")
NAME_CUTOFF = 0.8  # difflib similarity above which an unknown tool name is read as the known one
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
NAME_KEYS = ("name", "tool", "tool_name", "function")
TEXT_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)|```(?:json)?\s*(.*?)```|<\|python_tag\|>\s*(.*)",
                       re.DOTALL)
NUMBER_TEXT = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+|[+-]?\d+(?:\.\d+)?")
SEQUENCE_TEXT = re.compile(r"(\d+(?:\.\d+)?)\s*[kK]")  # "8k" in a sequence length: 8·1024, the CLI's reading
OBJECT_ARGUMENTS = ("scenario", "change", "plan", "plan_a", "plan_b", "constraints")


@dataclass(frozen=True)
class Repaired:
    reply: ModelReply
    retry: str | None = None  # tell the model this, then let it answer again
    notes: list[str] = field(default_factory=list)  # what was repaired, for logs and tests


def repair_reply(reply: ModelReply, tools: list[dict], conversation: list[dict] | None = None,
                 scenario: dict | None = None, *, may_retry: bool = True) -> Repaired:
    """The reply with its tool calls repaired. `tools` are the schemas offered this round (none:
    nothing to repair); `scenario` is the conversation's current one, for a call that omits it."""
    known = [t["function"]["name"] for t in tools]
    if not known:
        return Repaired(reply)
    notes: list[str] = []
    calls, text = list(reply.tool_calls), reply.text
    if not calls and text:
        found, prose, unreadable = calls_in_text(text, known)
        if found:
            calls, text = found, prose
            notes.append(f"read {len(found)} tool call(s) written as text")
        elif unreadable and may_retry:
            return Repaired(reply, retry=RETRY.format(why=f" ({unreadable})"), notes=["asked to call the tool again"])
    current = latest_scenario(conversation or [], scenario)
    fixed = [repair_call(c, known, current, notes) for c in calls]
    return Repaired(ModelReply(text, fixed, "tool_calls" if fixed else reply.finish_reason), notes=notes)


# -- calls written as text -----------------------------------------------------------------
def calls_in_text(text: str, known: list[str]) -> tuple[list[ToolCall], str, str | None]:
    """(calls, the text without them, why an apparent call could not be read)."""
    pieces = [(m.span(), next(g for g in m.groups() if g is not None)) for m in TEXT_CALL.finditer(text)]
    if not pieces and text.strip()[:1] in "[{":
        pieces = [((0, len(text)), text.strip())]
    calls, spans, problem = [], [], None
    for span, body in pieces:
        found, why = _calls_in_json(body, known)
        if found:
            calls += found
            spans.append(span)
        elif why and _mentions_a_tool(body, known):
            problem = why
    if not calls:
        return [], text, problem
    prose = text
    for start, end in reversed(spans):
        prose = prose[:start] + prose[end:]
    calls = [ToolCall(id=f"call_text_{i}", name=c.name, arguments=c.arguments) for i, c in enumerate(calls)]
    return calls, prose.strip(), None


def _mentions_a_tool(text: str, known: list[str]) -> bool:
    return "{" in text and any(name in text for name in known)


def _calls_in_json(body: str, known: list[str]) -> tuple[list[ToolCall], str | None]:
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return [], f"its JSON breaks at character {exc.pos}: {exc.msg}"
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict):
            return [], "it is not a JSON object"
        if isinstance(item.get("function"), dict):  # the chat-completions shape itself
            item = item["function"]
        name = next((item[k] for k in NAME_KEYS if isinstance(item.get(k), str)), None)
        if name is None or resolve_name(name, known) is None:
            return [], None if name is None else f"there is no tool named {name!r}"
        arguments = next((item[k] for k in ARGUMENT_KEYS if k in item), {})
        calls.append(ToolCall(id="", name=name, arguments=arguments if isinstance(arguments, str)
                              else json.dumps(arguments)))
    return calls, None


# -- one call --------------------------------------------------------------------------------
def resolve_name(name: str, known: list[str]) -> str | None:
    """The known tool a name means, when only one fits."""
    if name in known:
        return name
    plain = re.sub(r"^(functions|tools?)[.:]", "", name.strip())
    plain = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", plain).lower().replace("-", "_").replace(" ", "_")
    if plain in known:
        return plain
    starting = [k for k in known if k.startswith(plain) or plain.startswith(k)]
    if len(starting) == 1:
        return starting[0]
    close = difflib.get_close_matches(plain, known, n=2, cutoff=NAME_CUTOFF)
    if len(close) == 1 or (len(close) == 2 and _ratio(plain, close[0]) > _ratio(plain, close[1])):
        return close[0]
    return None


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def repair_call(call: ToolCall, known: list[str], scenario: dict | None, notes: list[str]) -> ToolCall:
    name = resolve_name(call.name, known) or call.name
    if name != call.name:
        notes.append(f"tool name {call.name!r} read as {name!r}")
    arguments = _unwrap(call.arguments, notes)
    if isinstance(arguments, dict):
        arguments = repair_arguments(name, arguments, scenario, notes)
        text = json.dumps(arguments)
    else:
        text = call.arguments  # not an object: the dispatcher says what is wrong
    return ToolCall(id=call.id, name=name, arguments=text)


def _unwrap(arguments: str, notes: list[str]):
    """JSON text -> value, through as many layers of JSON-in-a-string as there are."""
    value = arguments
    for depth in range(3):
        if not isinstance(value, str):
            break
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return arguments
        if depth and isinstance(value, dict):
            notes.append("arguments were a JSON string inside a string")
    return value


def repair_arguments(tool: str, arguments: dict, scenario: dict | None, notes: list[str]) -> dict:
    args_model = _args_model(tool)
    if args_model is None:
        return arguments
    fields = args_model.model_fields
    out = dict(arguments)
    for key in OBJECT_ARGUMENTS:  # an object argument sent as JSON text
        if key in fields and isinstance(out.get(key), str) and out[key].strip().startswith("{"):
            try:
                out[key] = json.loads(out[key])
                notes.append(f"{key} was a JSON string")
            except json.JSONDecodeError:
                pass
    out = _nest_flat_fields(tool, out, fields, scenario, notes)
    if "scenario" in fields and fields["scenario"].is_required() and "scenario" not in out and scenario:
        out["scenario"] = dict(scenario)
        notes.append("scenario left out: the conversation's current one used")
    return _numbers(out, notes)


def _nest_flat_fields(tool: str, out: dict, fields: dict, scenario: dict | None, notes: list[str]) -> dict:
    """Scenario or plan fields written at the top level belong under the object argument that holds them."""
    from ..tools.scenario import Plan, Scenario

    for model, targets in ((Scenario, ("change", "scenario")), (Plan, ("plan", "constraints"))):
        flat = [k for k in out if k not in fields and k in model.model_fields]
        if not flat:
            continue
        target = next((t for t in targets if t in fields), None)
        if target == "change" and "scenario" not in out and not scenario:
            target = "scenario"  # nothing to change from: these fields are the scenario
        if target is None:
            continue
        holder = dict(out.get(target) or {})
        for k in flat:
            holder.setdefault(k, out.pop(k))
        out[target] = holder
        notes.append(f"{', '.join(flat)} moved under {target}")
    return out


def _numbers(value, notes: list[str], key: str = ""):
    """Numeric strings -> numbers, where the field takes a number ("64", "1,024", "0.1", "8k" tokens)."""
    if isinstance(value, dict):
        return {k: _numbers(v, notes, k) for k, v in value.items()}
    if not isinstance(value, str) or key not in _numeric_fields():
        return value
    text = value.strip()
    if NUMBER_TEXT.fullmatch(text):
        number = float(text.replace(",", ""))
        notes.append(f"{key} {value!r} read as a number")
        return int(number) if number.is_integer() else number
    counted = count_value(text)
    if counted is not None:  # "sixteen", "two dozen": read as the planner reads the user's count words
        notes.append(f"{key} {value!r} read as {counted}")
        return counted
    match = SEQUENCE_TEXT.fullmatch(text)
    if key == "seq_len" and match:
        notes.append(f"seq_len {value!r} read as {round(float(match.group(1)) * 1024)}")
        return round(float(match.group(1)) * 1024)
    return value


@lru_cache(maxsize=1)
def _numeric_fields() -> frozenset[str]:
    """Every argument name, at any depth of any tool's Args, whose type is a number."""
    from ..tools import registry

    names, models = set(), [t.args for t in registry().values()]
    while models:
        for name, info in models.pop().model_fields.items():
            types = _leaf_types(info.annotation)
            if int in types or float in types:
                names.add(name)
            models += [t for t in types if isinstance(t, type) and hasattr(t, "model_fields")]
    return frozenset(names)


def _leaf_types(annotation) -> list:
    inner = get_args(annotation)
    if not inner or get_origin(annotation) is Literal:
        return [annotation]
    return [leaf for a in inner for leaf in _leaf_types(a)]


def _args_model(tool: str):
    from ..tools import registry

    found = registry().get(tool)
    return found.args if found is not None else None


def latest_scenario(conversation: list[dict], fallback: dict | None) -> dict | None:
    """The scenario the last successful tool result used (a what-if's `after`), else `fallback`."""
    for message in reversed(conversation):
        if message.get("role") != "tool":
            continue
        try:
            body = json.loads(message.get("content") or "")
        except (json.JSONDecodeError, TypeError):
            continue
        for key in ("after", "scenario"):
            facts = body.get(key) if isinstance(body, dict) else None
            if isinstance(facts, dict) and isinstance(facts.get("arguments"), dict):
                return {k: v for k, v in facts["arguments"].items() if v is not None}
    return fallback
