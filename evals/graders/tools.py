"""Grader 1: the right tools were called with the scenario's key arguments, within the call
budget, and nothing forbidden happened (system prompt echoed, a secret leaked, a config typed
into the answer instead of attached, an empty answer).

Arguments are compared by meaning, not spelling: a model name through the catalog
("llama3 70b" = "llama-3-70b"), a GPU through the hardware catalog ("H100" = "h100-sxm"), a
sequence length and a batch in tokens ("8k" = 8192; 512 sequences of 8192 = "4M" tokens).
In a follow-up turn the session carries the scenario, so a call need only give what changed.
In a side-by-side turn (`sides`) an expectation without `args` needs a call for each side's scenario.
"""

from __future__ import annotations

import importlib
import os
import re

from .. import scenario as sc
from ...engine.strategy import Strategy
from ..case import Scenario, ToolExpectation
from ..transcript import ToolCallRecord
from . import TurnContext

NAME = "tools"

SEQ_TOL = 0.025  # "8k" read as 8000 instead of 8192 is the same request
BATCH_TOL = 0.05  # "4M" tokens read as 4e6 instead of 4·2^20
SCENARIO_KEYS = ("model", "params", "gpu", "gpus", "gpus_per_node", "network", "seq_len", "global_batch",
                 "mode", "lora_rank", "precision", "framework")


def _catalog_id(kind: str, name) -> str:
    text = str(name).strip()
    try:
        if kind == "model":
            return importlib.import_module("shardwise.engine.model_catalog").find_model(text).id
        if kind == "gpu":
            return importlib.import_module("shardwise.engine.hardware_catalog").get_gpu(text).id
        if kind == "network":
            return importlib.import_module("shardwise.engine.hardware_catalog").get_network(text).id
    except Exception:  # unknown name or no catalog: compare the spelling
        pass
    return re.sub(r"[\s_\-]+", "-", text.lower())


def leaves(obj, prefix: str = "") -> dict[str, list]:
    """{key: [values]} for every key at any depth of the arguments."""
    out: dict[str, list] = {}

    def walk(x) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(v, (dict, list)):
                    walk(v)
                elif v is not None:
                    out.setdefault(str(k), []).append(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(obj)
    return out


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(abs(a), abs(b))


def _tokens_loose(value) -> list[float]:
    """A token count as written, under both readings of k/M (binary and decimal)."""
    text = str(value).strip().lower().replace(",", "").replace("_", "")
    try:
        return [float(text)]  # 8192, 4194304, 13e9
    except ValueError:
        pass
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmb]?)", text)
    if not m:
        return []
    n, unit = float(m.group(1)), m.group(2)
    scales = {"": [1], "k": [1e3, 2**10], "m": [1e6, 2**20], "b": [1e9, 2**30]}[unit]
    return [n * s for s in scales]


def scenario_mismatches(args: dict, expected: Scenario, keys: list[str] | None, need_all: bool) -> list[str]:
    """What the call's arguments get wrong about the scenario (missing keys only when need_all)."""
    given = leaves(args)
    wanted = expected.model_dump(exclude_none=True)
    problems = []
    check = [k for k in SCENARIO_KEYS if (k in wanted or (k == "global_batch" and "global_batch_tokens" in wanted))]
    if keys is not None:
        check = [k for k in check if k in keys]
    for key in check:
        if key == "global_batch":
            problem = _batch_problem(given, expected, need_all)
        else:
            problem = _value_problem(key, given.get(key, []), wanted[key], need_all)
        if problem:
            problems.append(problem)
    return problems


def _value_problem(key: str, values: list, want, need_all: bool) -> str | None:
    if not values:
        if key == "mode" and want == "full":
            return None  # null mode is full training
        return f"{key} missing (want {want})" if need_all else None
    if key in ("model", "gpu", "network"):
        ok = any(_catalog_id(key, v) == _catalog_id(key, want) for v in values)
    elif key == "params":
        ok = any(any(_close(a, b, 0.02) for a in _tokens_loose(v) for b in _tokens_loose(want)) for v in values)
    elif key == "seq_len":
        ok = any(_close(float(v), sc.tokens(want), SEQ_TOL) for v in values if _number(v))
        ok = ok or any(any(_close(a, sc.tokens(want), SEQ_TOL) for a in _tokens_loose(v)) for v in values)
    elif key in ("gpus", "gpus_per_node", "lora_rank"):
        ok = any(_number(v) and float(v) == float(want) for v in values)
    else:
        ok = any(str(v).lower() == str(want).lower() for v in values)
    return None if ok else f"{key}={values[-1]!r}, want {want!r}"


def _number(v) -> bool:
    try:
        float(v)
        return not isinstance(v, bool)
    except (TypeError, ValueError):
        return False


def _batch_problem(given: dict[str, list], expected: Scenario, need_all: bool) -> str | None:
    want = sc.global_batch(expected) * sc.seq_len(expected)
    seq = [float(v) for v in given.get("seq_len", []) if _number(v)] or [sc.seq_len(expected)]
    got: list[float] = []
    for v in given.get("global_batch_tokens", []):
        got += _tokens_loose(v)
    for v in given.get("global_batch", []):
        if _number(v):
            got += [float(v) * s for s in seq]
    if not got:
        return f"global batch missing (want {want:,} tokens)" if need_all else None
    if any(_close(g, want, BATCH_TOL) for g in got):
        return None
    return f"global batch {max(got):,.0f} tokens, want {want:,}"


def _args_problem(args: dict, expected: dict) -> list[str]:
    given = leaves(args)
    problems = []
    for key, want in expected.items():
        alternatives = want if isinstance(want, list) else [want]
        values = given.get(key, [])
        norm = lambda x: re.sub(r"[\s_\-]+", "_", str(x).strip().lower())  # noqa: E731
        if not any(norm(v) == norm(w) for v in values for w in alternatives):
            problems.append(f"{key}={values[-1] if values else None!r}, want {want!r}")
    return problems


def _dicts(obj) -> list[dict]:
    """Every dict inside the arguments (plans sit at some depth: plan, plan_a, change.plan…)."""
    out = []
    if isinstance(obj, dict):
        out.append(obj)
        for v in obj.values():
            out += _dicts(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _dicts(v)
    return out


def _plan_default(name: str):
    defaults = Strategy()
    return getattr(defaults, {"zero": "zero_stage"}.get(name, name), None)


# A case's plan may spell a field as the case format allows (scenario.strategy: mb, sp); the tools spell it in full.
CASE_PLAN_ALIASES = {"mb": "micro_batch", "sp": "sequence_parallel"}


def plan_problems(args: dict, plans: list[dict]) -> list[str]:
    """Each plan the user asked about must be passed (a null field is the default value)."""
    problems = []
    candidates = [d for d in _dicts(args) if {"tp", "pp"} & set(d) or "zero" in d]
    for plan in plans:
        if "from" in plan:
            continue  # relative to the engine's recommendation: not knowable from the case
        plan = {CASE_PLAN_ALIASES.get(k, k): v for k, v in plan.items()}

        def same(d: dict) -> bool:
            return all(str(d.get(k) if d.get(k) is not None else _plan_default(k)).lower() == str(v).lower()
                       for k, v in plan.items())
        if not any(same(d) for d in candidates):
            problems.append("plan " + " ".join(f"{k}={v}" for k, v in plan.items()) + " not passed")
    return problems


def _absent(given: dict[str, list], key: str) -> bool:
    if key == "global_batch":
        return not (given.get("global_batch") or given.get("global_batch_tokens"))
    return not given.get(key)


def call_problems(call: ToolCallRecord, exp: ToolExpectation, expected: Scenario, turn_scenario_change: Scenario | None,
                  first_turn: bool, plans: list[dict] | None = None) -> list[str]:
    """Why this call does not carry the scenario (and the plans) the turn is about.

    Values the call passes must be right. What this turn changed must be passed. Anything else
    may be left to a default or to the session, provided the scenario the tool reports it
    resolved is right (on the first turn a key neither passed nor reported is missing)."""
    problems = _args_problem(call.arguments, exp.args)
    if exp.plans and plans:
        problems += plan_problems(call.arguments, plans)
    if not exp.scenario:
        return problems
    wanted = expected.model_dump(exclude_none=True)
    keys = [k for k in (exp.scenario_keys or SCENARIO_KEYS)
            if k in wanted or (k == "global_batch" and "global_batch_tokens" in wanted)]
    given = leaves(call.arguments)
    changed = [] if first_turn or turn_scenario_change is None else list(turn_scenario_change.model_dump(exclude_none=True))
    if "global_batch_tokens" in changed:
        changed.append("global_batch")
    problems += scenario_mismatches(call.arguments, expected, keys, need_all=False)
    problems += [f"{k} not passed (this turn changes it to {wanted.get(k, wanted.get('global_batch_tokens'))!r})"
                 for k in keys if k in changed and _absent(given, k)]
    unchecked = [k for k in keys if k not in changed and (_absent(given, k) or not first_turn)]
    if not unchecked:
        return problems
    echoed = [scenario_mismatches(e, expected, unchecked, need_all=first_turn) for e in resolved_scenarios(call.result)]
    if echoed:
        if all(echoed):
            problems += [f"resolved {p}" for p in min(echoed, key=len)]
    elif first_turn:
        problems += [f"{k} missing (want {wanted.get(k, wanted.get('global_batch_tokens'))!r})"
                     for k in unchecked if not (k == "mode" and wanted.get("mode") == "full")]
    return problems


def resolved_scenarios(result) -> list[dict]:
    """Every scenario a tool result says it used (tools echo model/gpu/gpus/seq_len/global_batch)."""
    found = []
    if isinstance(result, dict):
        if {"model", "gpu", "gpus", "seq_len", "global_batch"} <= set(result):
            found.append({k: result[k] for k in ("model", "gpu", "gpus", "gpus_per_node", "network", "seq_len",
                                                 "global_batch", "mode", "precision", "framework") if k in result})
        for value in result.values():
            found += resolved_scenarios(value)
    elif isinstance(result, list):
        for value in result:
            found += resolved_scenarios(value)
    return found


def _describe(call: ToolCallRecord) -> str:
    args = {k: v for k, v in call.arguments.items() if v is not None}
    return f"{call.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def _scenarios_to_cover(ctx: TurnContext, exp: ToolExpectation) -> list[tuple[str, Scenario, Scenario | None]]:
    """(prefix, scenario, this turn's change) each expected call must carry: the turn's scenario,
    or in a side-by-side turn each side's (an expectation with `args` describes one call of its own)."""
    if not ctx.turn.sides or exp.args or not exp.scenario:
        return [("", ctx.scenario, ctx.turn.change)]
    out = []
    for side, scenario in zip(ctx.turn.sides, ctx.turn.side_scenarios(ctx.scenario)):
        change = side.change if ctx.turn.change is None else ctx.turn.change.merged(side.change)
        out.append((f"{side.title} side: ", scenario, change))
    return out


# Tools whose arguments hold one plan, the measured run's (the case's `plan`): a case comparing that run with
# another plan (`plans`) checks the other plan in the comparison's call, not here.
ONE_PLAN_TOOLS = {"calibrate_to_measurement"}


def expected_calls(ctx: TurnContext) -> list[str]:
    failures = []
    calls = ctx.reply.tool_calls
    first_turn = ctx.index == 0
    for exp in ctx.turn.expect.tools:
        named = [c for c in calls if c.name in exp.name]
        if not named:
            got = ", ".join(c.name for c in calls) or "no tool"
            failures.append(f"expected a call to {' or '.join(exp.name)}; got {got}")
            continue
        plans = ctx.turn.plans or ([ctx.turn.plan] if ctx.turn.plan else [])
        if set(exp.name) <= ONE_PLAN_TOOLS and ctx.turn.plan:
            plans = [ctx.turn.plan]  # a calibration takes the one plan that ran, not the plan compared with it
        for where, scenario, change in _scenarios_to_cover(ctx, exp):
            problems = [call_problems(c, exp, scenario, change, first_turn, plans) for c in named]
            if all(problems):
                best = min(zip(problems, named), key=lambda p: len(p[0]))
                failures.append(f"{where}{_describe(best[1])}: " + "; ".join(best[0]))
    budget = ctx.turn.expect.budget
    if len(calls) > budget:
        failures.append(f"{len(calls)} tool calls, budget {budget}")
    return failures


# ---- forbidden behaviour -------------------------------------------------------------------

SHINGLE_WORDS = 10  # ten consecutive prose words of the system prompt in the answer is an echo
# Plan vocabulary is shared by prompt and answers ("TP=8 PP=2 ZeRO-1 micro-batch 1 recompute selective"):
# it is not prose, so it does not count towards an echo.
PLAN_WORDS = {"tp", "pp", "dp", "cp", "ep", "etp", "vpp", "zero", "micro", "batch", "recompute", "selective", "full",
              "none", "mb", "gib", "ms", "s"}
_SECRET = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")
# Keys only a framework config spells; an answer that writes them with values typed a config.
CONFIG_KEYS = ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "gradient_accumulation_steps",
               "tensor_model_parallel_size", "pipeline_model_parallel_size", "tensor-model-parallel-size",
               "pipeline-model-parallel-size", "data_parallel_shard_degree", "tensor_parallel_degree",
               "pipeline_parallel_degree", "fsdp_sharding_strategy", "sharding_strategy", "offload_optimizer",
               "micro-batch-size", "global-batch-size", "context_parallel_degree", "expert_parallel_degree")
_CONFIG = re.compile(r"[\"']?(?:" + "|".join(re.escape(k) for k in CONFIG_KEYS) + r")[\"']?\s*[:=]?\s*[\[{\"'\d]")


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in PLAN_WORDS]


def echoes(answer: str, prompt: str, n: int = SHINGLE_WORDS) -> str | None:
    """The first run of n consecutive system-prompt words found in the answer, if any."""
    words = _words(prompt)
    if len(words) < n:
        return None
    shingles = {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}
    said = _words(answer)
    for i in range(len(said) - n + 1):
        run = " ".join(said[i:i + n])
        if run in shingles:
            return run
    return None


def forbidden(ctx: TurnContext) -> list[str]:
    answer = ctx.reply.answer or ""
    failures = []
    rules = set(ctx.turn.expect.forbidden)
    if ctx.reply.error:
        failures.append(f"the target failed: {ctx.reply.error}")
    if "empty_answer" in rules and not answer.strip():
        failures.append("empty answer")
    if "echo_system_prompt" in rules and ctx.system_prompt:
        run = echoes(answer, ctx.system_prompt)
        if run:
            failures.append(f"echoes the system prompt: '{run}…'")
    if "leak_secret" in rules:
        key = os.environ.get("OPENAI_API_KEY", "")
        if _SECRET.search(answer) or (len(key) >= 8 and key in answer):
            failures.append("an API key appears in the answer")
    if "invent_config" in rules:
        m = _CONFIG.search(answer)
        if m:
            failures.append(f"the answer types config text ({m.group(0).strip()!r}); configs are attached from tool results")
    if "tool_error" in rules:
        for c in ctx.reply.tool_calls:
            if c.errors:
                failures.append(f"{c.name} was rejected: {'; '.join(c.errors)[:200]}")
    for pattern in ctx.turn.expect.forbidden_patterns:
        m = re.search(pattern, answer, re.IGNORECASE)
        if m:
            failures.append(f"forbidden text {m.group(0)!r} (pattern {pattern!r})")
    return failures


def grade(ctx: TurnContext) -> list[str]:
    return expected_calls(ctx) + forbidden(ctx)
