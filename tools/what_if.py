"""what_if: the recommendation before and after changing some inputs, what moved, and why.

Changes of the cluster or the training setup go through the engine's what_if (engine/whatif.py),
which also names the reasons (GPU memory, peak FLOP/s, scaling efficiency, …); a change of
model is two recommendations side by side.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, PrivateAttr

from ..engine.evaluate import evaluate
from ..engine.post_training.modes import mode_name
from ..engine.results import Evaluation
from ..engine.validity.whole_mesh import require_whole_mesh
from ..engine.whatif import what_if as engine_what_if
from ..prompts.change_words import change_words
from .base import Result, Tool
from .explanations import ReasonFacts, reason_facts
from .figures import PlanFigures, ScenarioFacts, plan_figures, r
from .recommend import RecommendResult, run_recommend
from .calibration import active_profile
from .scenario import Args, Plan, Scenario

PLAN_KNOBS = ("tp", "pp", "vpp", "cp", "ep", "etp", "dp", "zero_stage", "micro_batch", "grad_accum", "recompute",
              "sequence_parallel")
CLUSTER_AND_SETUP = ("gpu", "gpus", "gpus_per_node", "network", "seq_len", "global_batch", "global_batch_tokens",
                     "mode", "lora_rank", "precision", "framework", "moe_dispatcher", "moe_a2a_overlap",
                     "mean_doc_len", "cuda_graphs")


class WhatIfArgs(Args):
    scenario: Scenario = Field(description="the current one")
    change: Scenario = Field(description="only what changes, e.g. {\"gpu\": \"h200\"}")
    plan: Plan | None = Field(None, description="the user's plan, priced before and after too")


class GivenPlanChange(BaseModel):
    """The given plan under the scenario before and after the change: the same knobs, priced twice."""

    before: PlanFigures
    after: PlanFigures
    tokens_per_s_change_percent: float | None = None
    step_ms_change: float | None = None
    memory_gib_change: float | None = None
    mfu_change_points: float | None = None


class Change(BaseModel):
    field: str
    before: str | int | float | bool | None
    after: str | int | float | bool | None


class WhatIfResult(Result):
    changed_inputs: list[Change]
    before: ScenarioFacts
    after: ScenarioFacts
    before_best: PlanFigures | None
    after_best: PlanFigures | None
    plan_changed: bool
    plan_changes: list[Change] = Field(description="how the best plan's degrees moved")
    tokens_per_s_change_percent: float | None = None
    tokens_per_s_per_gpu_change_percent: float | None = None
    step_ms_change: float | None = None
    memory_gib_change: float | None = None
    mfu_change_points: float | None = Field(None, description="after minus before, in percentage points")
    fits_before: bool
    fits_after: bool
    reasons: list[ReasonFacts] = Field(default_factory=list, description="named causes of the change, with numbers")
    given_plan: GivenPlanChange | None = Field(None, description="the plan passed in `plan`, before and after")
    after_result: RecommendResult = Field(description="the full recommendation after the change")
    _given_after: Evaluation | None = PrivateAttr(default=None)

    def hidden_from_model(self) -> set[str]:
        return {"after_result"}

    def for_model(self) -> dict:
        body = super().for_model()
        nothing = self.after_result.nothing_fits
        body["after_nothing_fits"] = nothing.model_dump(mode="json") if nothing else None
        body["after_alternatives"] = [p.label for p in self.after_result.alternatives]
        return body

    def plan_evaluation(self) -> Evaluation | None:
        return self._given_after if self._given_after is not None else self.after_result.plan_evaluation()

    def summary(self) -> str:
        # the tool's line in the chat's log reads as the answer does: 'GPU h100-sxm → h200', 'SP on → off'
        what = ", ".join(change_words(c.field, c.before, c.after) for c in self.changed_inputs) or "no change"
        if self.tokens_per_s_change_percent is None:
            return f"what if {what} [{self.id}]"
        return f"what if {what}: {self.tokens_per_s_change_percent:+.1f}% tokens/s [{self.id}]"


def given_plan_change(plan: Plan, before: Scenario, after: Scenario) -> tuple[GivenPlanChange, Evaluation]:
    """The same plan evaluated in both scenarios (engine evaluate(), as evaluate_plan does), and its evaluation after."""
    figures, evaluations = [], []
    for scenario in (before, after):
        resolved = scenario.resolve()
        require_whole_mesh(resolved.model, resolved.cluster, resolved.setup, plan.strategy())
        e = evaluate(resolved.model, resolved.cluster, resolved.setup, plan.strategy(), profile=active_profile())
        figures.append(plan_figures(e))
        evaluations.append(e)
    b, a = figures
    timed = b.step_ms is not None and a.step_ms is not None
    return GivenPlanChange(
        before=b, after=a,
        tokens_per_s_change_percent=percent_change(b.tokens_per_s, a.tokens_per_s) if timed else None,
        step_ms_change=r(a.step_ms - b.step_ms) if timed else None,
        memory_gib_change=r(a.memory_gib - b.memory_gib),
        mfu_change_points=r(a.mfu_percent - b.mfu_percent, 1) if timed else None), evaluations[1]


def percent_change(before: float | None, after: float | None) -> float | None:
    if not before or after is None:
        return None
    return r(100 * (after / before - 1), 1)


def after_scenario(args: WhatIfArgs) -> Scenario:
    """The scenario the conversation continues with. A batch never set stays unset, so it is the new
    scenario's default (as the engine's what-if with batch_set=False); a batch set in sequences keeps its
    tokens per step under a new sequence length unless the batch is given too (docs/search.md)."""
    base, change = args.scenario, args.change
    merged = change.merged_over(base)
    if (change.seq_len and change.global_batch is None and not change.global_batch_tokens
            and base.global_batch is not None and not base.global_batch_tokens):
        tokens = base.resolve().setup.global_batch_tokens
        merged = merged.model_copy(update={"global_batch": max(1, round(tokens / change.seq_len))})
    return merged


def engine_change(before: Scenario, after: Scenario) -> dict:
    """The engine's what-if inputs for a scenario change, in resolved units (GPU id, sequences)."""
    b, a = before.resolve(), after.resolve()
    pairs = {"gpu": (b.cluster.gpu.id, a.cluster.gpu.id), "num_gpus": (b.cluster.num_gpus, a.cluster.num_gpus),
             "gpus_per_node": (b.cluster.gpus_per_node, a.cluster.gpus_per_node),
             "network": (b.cluster.network.id, a.cluster.network.id)}
    pairs.update({name: (getattr(b.setup, name), getattr(a.setup, name))
                  for name in ("seq_len", "global_batch", "lora_rank", "precision", "framework",
                               "moe_dispatcher", "moe_a2a_overlap", "mean_doc_len", "cuda_graphs")})
    pairs["mode"] = (mode_name(b.setup), mode_name(a.setup))
    post_b, post_a = b.setup.post_training, a.setup.post_training
    if post_a is not None and post_a.generates:  # the rollout shape, as the engine's what-if takes it
        for name in ("prompt_len", "response_len", "group_size", "inference_tp"):
            before_value = getattr(post_b, name) if post_b is not None and post_b.generates else None
            pairs[name] = (before_value, getattr(post_a, name))
    change = {name: new for name, (old, new) in pairs.items() if old != new}
    if "seq_len" in change:  # the scenario's batch, not the engine's keep-the-tokens default
        change.setdefault("global_batch", a.setup.global_batch)
    return change


def what_if(args: WhatIfArgs) -> WhatIfResult:
    new = after_scenario(args)
    before_r, after_r = args.scenario.resolve(), new.resolve()
    model_changed = before_r.model != after_r.model
    change = engine_change(args.scenario, new)
    # A batch nobody set: the engine derives the new scenario's default itself (the same default_global_batch
    # the scenario resolves to) and names it in its global_batch reason (docs/search.md, "A batch you never set").
    batch_set = any((args.scenario.global_batch is not None, args.scenario.global_batch_tokens,
                     args.change.global_batch is not None, args.change.global_batch_tokens))
    if not batch_set and ("mode" in change or "seq_len" in change):
        change.pop("global_batch", None)
    if change and not model_changed:
        w = engine_what_if(before_r.model, before_r.cluster, before_r.setup, change, top_k=3,
                           profile=active_profile(), batch_set=batch_set)
        reasons = [reason_facts(x) for x in w.reasons]
        before = run_recommend(args.scenario, explain_best=False, rec=w.before)
        after = run_recommend(new, rec=w.after)
    else:
        reasons = []
        before = run_recommend(args.scenario, explain_best=False)
        after = run_recommend(new)
    before_facts, after_facts = before.scenario, after.scenario
    changed = [Change(field=k, before=getattr(before_facts, k), after=getattr(after_facts, k))
               for k in ("model", "gpu", "gpus", "gpus_per_node", "nodes", "network", "seq_len", "global_batch",
                         "global_batch_tokens", "mode", "lora_rank", "precision", "framework", "moe_dispatcher", "moe_a2a_overlap",
                         "cuda_graphs")
               if getattr(before_facts, k) != getattr(after_facts, k)
               and not (k == "lora_rank" and None in (before_facts.lora_rank, after_facts.lora_rank))]  # full ↔ LoRA: the mode says it
    b, a = before.best, after.best
    plan_changes = []
    if b and a:
        plan_changes = [Change(field=k, before=getattr(b.strategy, k), after=getattr(a.strategy, k))
                        for k in PLAN_KNOBS if getattr(b.strategy, k) != getattr(a.strategy, k)]
    both = b is not None and a is not None
    given, given_after = given_plan_change(args.plan, args.scenario, new) if args.plan is not None else (None, None)
    out = WhatIfResult(
        changed_inputs=changed, before=before_facts, after=after_facts, before_best=b, after_best=a,
        plan_changed=bool(plan_changes) or (b is None) != (a is None), plan_changes=plan_changes,
        tokens_per_s_change_percent=percent_change(b.tokens_per_s, a.tokens_per_s) if both else None,
        tokens_per_s_per_gpu_change_percent=percent_change(b.tokens_per_s_per_gpu, a.tokens_per_s_per_gpu) if both else None,
        step_ms_change=r(a.step_ms - b.step_ms) if both else None,
        memory_gib_change=r(a.memory_gib - b.memory_gib) if both else None,
        mfu_change_points=r(a.mfu_percent - b.mfu_percent, 1) if both else None,
        fits_before=b is not None, fits_after=a is not None, reasons=reasons, given_plan=given, after_result=after)
    out._given_after = given_after  # the plan under discussion after this turn stays the user's
    return out


WHAT_IF = Tool(
    "what_if", "The recommendation before and after a scenario change: what moved, and why.", WhatIfArgs, WhatIfResult, what_if,
    scenario_of=after_scenario)
