"""A message with several requests, answered act by act in the order asked, in one answer; and two
scenarios side by side."""

from __future__ import annotations

import re

from ...engine import hardware_catalog
from ...prompts.render import render
from ...tools.scenario import Plan, Scenario
from ..state import ConversationState, advance_state
from .answers import answer
from .entities import Entities, normalise
from .file_framework import file_framework, plan_is_users, rerank_for_file
from .intents import Intent
from .names import framework_said
from .reading import Request, compares_with_discussed
from .turn import Turn, base_gpu, base_gpus, base_per_node, result_or_error, scenario_args

MODE_NAMES = {"full": "full training", "lora": "LoRA", "qlora": "QLoRA"}


def acts_in_order(request: Request, state: ConversationState, scenario: Scenario, turn: Turn) -> str:
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
        if kind == "recommend" and detail == "uncertainty" and running.plan is not None and not e.plans \
                and not e.has_scenario():
            kind = act.kind = "evaluate"  # "tp8 pp2 or tp4 pp4? and how sure are you?": the plan just answered
        if kind == "export" and running.plan is not None and not framework_said(normalise(act.clause)):
            e.framework = None  # "the deepspeed config" is a file format; "we use deepspeed" changes the setup
        patch = e.scenario_patch(default_gpu=base_gpu(running), base_gpus=base_gpus(running),
                                 base_per_node=base_per_node(running), base=running.scenario)
        # Each act runs on the scenario so far with what its own clause states ("does that plan fit on 32 H200s?");
        # the model is the whole message's ("a 70B … for llama 3 70b" is one model). A what-if reads its own change.
        own = patch.model_dump(exclude_none=True)
        if request.facts.model or request.facts.params:
            own.pop("model", None), own.pop("params", None)
        act_scenario = (running.scenario or patch.merged_over(state.scenario)) if kind == "what_if" or running.scenario is None \
            else Scenario(**own).merged_over(running.scenario)
        if kind == "export":
            target = file_framework(detail or e.export_format, running)
            if target is not None:  # "a deepspeed json for that": the file's framework, and the plan re-ranked under it
                act_scenario = act_scenario.model_copy(update={"framework": target})
                if not plan_is_users(running):  # a plan the user brought is exported as is
                    text, running = rerank_for_file(turn, act_scenario, running, act.clause, detail or e.export_format)
                    parts.append(text.strip())
        first = len(turn.record.outcomes)
        if kind == "memory" and detail is None and not e.plans and running.plan is None and not act_scenario.missing():
            # "…, and walk me through the memory": the breakdown of the plan the tool recommends, in one call
            out = turn.call("estimate_memory", {"scenario": scenario_args(act_scenario), "plan": None})
            parts.append(result_or_error(out, "offline/memory.md.j2").strip())
        else:
            parts.append(answer(Intent(kind, detail), e, running, act_scenario, patch, turn, act.clause).strip())
        running = advance_state(running, turn.record.outcomes[first:])
        if kind == "explain" and len(e.plans) == 1 and len(e.plans[0]) >= 2:
            running = running.model_copy(update={"plan": Plan(**e.plans[0])})  # the user's plan the concept was shown on
    if running.plan is not None and any(a.kind in ("recommend", "what_if") for a in request.acts):
        parts.append(f"**Recommended plan:** `{running.plan.label()}` [{running.plan_result}]")  # the plan on the table now
    return "\n\n---\n\n".join(parts)


def _length_name(side: dict) -> str:
    """"8k context, global batch 256": a sequence-length side, in the units it is usually written in."""
    seq = side["seq_len"]
    name = f"{seq // 1024}k context" if seq % 1024 == 0 else f"{seq:,}-token context"
    return name + (f", global batch {side['global_batch']}" if "global_batch" in side else "")


# A catalog name ends in the vendor's memory size ("NVIDIA H200 SXM 141GB"); beside a memory row in GiB, the column
# says the size the engine counts, in GiB ("NVIDIA H200 SXM (141 GiB)"): one memory unit in the table.
VENDOR_MEMORY = re.compile(r"\s*\d+\s*GB$")


def gpu_column_name(gpu: str) -> str:
    spec = hardware_catalog.get_gpu(gpu)
    return VENDOR_MEMORY.sub(f" ({spec.memory_gib:g} GiB)", spec.name) if VENDOR_MEMORY.search(spec.name) else spec.name


def _side_cost(e: Entities, sides: tuple[dict, ...]) -> dict:
    """The budget and price the message gave ("200B tokens @ $2.5/gpu-hr"), for every side's own cost. A price is
    one GPU's: it is not applied across sides that are different GPUs (each is priced at its listed rate)."""
    cost = {"train_tokens": e.train_tokens}
    if not any("gpu" in side for side in sides):
        cost["price_per_gpu_hour"] = e.price_per_gpu_hour
    return {k: v for k, v in cost.items() if v is not None}


def side_by_side(turn: Turn, scenario: Scenario, e: Entities, sides: tuple[dict, ...], state: ConversationState) -> str:
    """Two or more scenarios that differ in one fact, each with its own best plan (and its cost, when a budget
    or price was given)."""
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
        out = turn.call("recommend_plans", {"scenario": scenario_args(one), "top_k": 1, "headroom": None,
                                            "constraints": None, **_side_cost(e, sides)})
        if not out.ok:
            return render("offline/tool_error.md.j2", outcome=out)
        results.append(out.result)
        value = next(iter(side.values()))
        names.append(f"{side['gpus']} x {gpu_column_name(value)}" if "gpu" in side and "gpus" in side else
                     gpu_column_name(value) if "gpu" in side else
                     f"{value} GPUs" if "gpus" in side else
                     out.result.scenario.model if "model" in side else
                     _length_name(side) if "seq_len" in side else
                     f"{value} dispatcher" if "moe_dispatcher" in side else
                     ("no CUDA graphs" if value == "none" else f"{value} CUDA graphs") if "cuda_graphs" in side else
                     MODE_NAMES.get(value, value))
    return render("offline/side_by_side.md.j2", sides=list(zip(names, results)))
